"""Floor for mlp.grad: the same float32 MLP training, forward and backward written by hand in numpy."""

import numpy as np

STEPS = 20  # param
BATCH = 256  # param
rng = np.random.default_rng(0)
x = rng.standard_normal((BATCH, 784), np.float32)
labels = (rng.random(BATCH, np.float32) * 10).astype(np.int64)
w1 = rng.standard_normal((784, 512), np.float32) * np.float32(0.05)
b1 = np.zeros(512, np.float32)
w2 = rng.standard_normal((512, 10), np.float32) * np.float32(0.05)
b2 = np.zeros(10, np.float32)
lr = np.float32(0.1)
rows = np.arange(BATCH)
loss = np.float32(0)
for step in range(STEPS):
    z1 = x @ w1 + b1
    h = np.maximum(z1, 0)
    logits = h @ w2 + b2
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    total = e.sum(axis=1, keepdims=True)
    loss = (np.log(total[:, 0]) - shifted[rows, labels]).mean()
    g_logits = e / total
    g_logits[rows, labels] -= 1
    g_logits /= BATCH
    g_w2 = h.T @ g_logits
    g_b2 = g_logits.sum(axis=0)
    g_z1 = (g_logits @ w2.T) * (z1 > 0)
    g_w1 = x.T @ g_z1
    g_b1 = g_z1.sum(axis=0)
    for p, g in ((w1, g_w1), (b1, g_b1), (w2, g_w2), (b2, g_b2)):
        p -= lr * g
print(f"loss {loss:.4f}")
