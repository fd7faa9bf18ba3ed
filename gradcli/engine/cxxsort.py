"""libstdc++'s std::nth_element, std::sort and std::partial_sort, step for step, for the order of ties.

PyTorch's CPU topk (and so multinomial without replacement) selects with these algorithms; where
values tie, which of them it returns and in what order is whatever the algorithms' swaps leave behind.
These functions make the same comparisons and the same moves, on a Python list in place, with a
`before(x, y)` predicate in the role of the C++ comparator (GCC 13's <bits/stl_algo.h>, <bits/stl_heap.h>).
"""

from __future__ import annotations

_THRESHOLD = 16          # std::sort leaves runs this short to its final insertion sort


def _lg(n: int) -> int:
    return n.bit_length() - 1


# ---- heaps ------------------------------------------------------------------------------------

def _push_heap(a, first, hole, top, value, before):
    parent = (hole - 1) // 2
    while hole > top and before(a[first + parent], value):
        a[first + hole] = a[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    a[first + hole] = value


def _adjust_heap(a, first, hole, length, value, before):
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if before(a[first + child], a[first + child - 1]):
            child -= 1
        a[first + hole] = a[first + child]
        hole = child
    if length & 1 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        a[first + hole] = a[first + child - 1]
        hole = child - 1
    _push_heap(a, first, hole, top, value, before)


def _make_heap(a, first, last, before):
    length = last - first
    if length < 2:
        return
    parent = (length - 2) // 2
    while True:
        _adjust_heap(a, first, parent, length, a[first + parent], before)
        if parent == 0:
            return
        parent -= 1


def _pop_heap(a, first, last, result, before):
    value = a[result]
    a[result] = a[first]
    _adjust_heap(a, first, 0, last - first, value, before)


def _heap_select(a, first, middle, last, before):
    _make_heap(a, first, middle, before)
    for i in range(middle, last):
        if before(a[i], a[first]):
            _pop_heap(a, first, middle, i, before)


def _sort_heap(a, first, last, before):
    while last - first > 1:
        last -= 1
        _pop_heap(a, first, last, last, before)


# ---- partitions and insertion sorts -----------------------------------------------------------

def _move_median_to_first(a, result, x, y, z, before):
    if before(a[x], a[y]):
        if before(a[y], a[z]):
            pick = y
        elif before(a[x], a[z]):
            pick = z
        else:
            pick = x
    elif before(a[x], a[z]):
        pick = x
    elif before(a[y], a[z]):
        pick = z
    else:
        pick = y
    a[result], a[pick] = a[pick], a[result]


def _unguarded_partition(a, first, last, pivot, before):
    while True:
        while before(a[first], a[pivot]):
            first += 1
        last -= 1
        while before(a[pivot], a[last]):
            last -= 1
        if not first < last:
            return first
        a[first], a[last] = a[last], a[first]
        first += 1


def _partition_pivot(a, first, last, before):
    mid = first + (last - first) // 2
    _move_median_to_first(a, first, first + 1, mid, last - 1, before)
    return _unguarded_partition(a, first + 1, last, first, before)


def _linear_insert(a, last, before):
    value = a[last]
    nxt = last - 1
    while before(value, a[nxt]):
        a[last] = a[nxt]
        last = nxt
        nxt -= 1
    a[last] = value


def _insertion_sort(a, first, last, before):
    if first == last:
        return
    for i in range(first + 1, last):
        if before(a[i], a[first]):
            value = a[i]
            a[first + 1:i + 1] = a[first:i]
            a[first] = value
        else:
            _linear_insert(a, i, before)


# ---- the three algorithms ---------------------------------------------------------------------

def nth_element(a: list, nth: int, before) -> None:
    """std::nth_element(a.begin(), a.begin() + nth, a.end(), before): introselect."""
    first, last = 0, len(a)
    if first == last or nth == last:
        return
    depth = 2 * _lg(last - first)
    while last - first > 3:
        if depth == 0:
            _heap_select(a, first, nth + 1, last, before)
            a[first], a[nth] = a[nth], a[first]
            return
        depth -= 1
        cut = _partition_pivot(a, first, last, before)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(a, first, last, before)


def sort(a: list, last: int, before) -> None:
    """std::sort(a.begin(), a.begin() + last, before): introsort, then the final insertion sort."""
    if last <= 0:
        return
    # introsort's loop recurses on the right part and iterates on the left: an explicit stack of
    # (first, last, depth) keeps the same order of work
    stack = [(0, last, 2 * _lg(last))]
    while stack:
        first, end, depth = stack.pop()
        while end - first > _THRESHOLD:
            if depth == 0:
                _heap_select(a, first, end, end, before)
                _sort_heap(a, first, end, before)
                break
            depth -= 1
            cut = _partition_pivot(a, first, end, before)
            # the recursive call on [cut, end) runs to completion before the loop goes on with
            # [first, cut): push the left part's continuation first, then the right part
            stack.append((first, cut, depth))
            first = cut
        else:
            continue
    if last > _THRESHOLD:
        _insertion_sort(a, 0, _THRESHOLD, before)
        for i in range(_THRESHOLD, last):
            _linear_insert(a, i, before)
    else:
        _insertion_sort(a, 0, last, before)


def partial_sort(a: list, middle: int, before) -> None:
    """std::partial_sort(a.begin(), a.begin() + middle, a.end(), before)."""
    _heap_select(a, 0, middle, len(a), before)
    _sort_heap(a, 0, middle, before)
