"""A cache bounded in entries and in weight, so that floods of distinct keys cannot grow it.

The reader and the row decoders keep what servers repeat (Table_maps decoded
once per distinct body, struct factories once per FDE layout).  A crafted log
can make every key distinct and every value big (a 4096-column table, an FDE
with a 255-entry post-header table), so each cache counts both its entries and
a weight (bytes or columns) and drops its oldest entries when either passes its
bound.  Hits are plain ``dict.get`` calls: ``get`` is the dict's own method.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Generic, Hashable, TypeVar

__all__ = ["BoundedCache"]

_ABSENT = object()

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BoundedCache(Generic[K, V]):
    """A mapping that keeps at most ``max_entries`` entries of total ``weigh`` at most
    ``max_weight``; inserting past either bound drops the oldest entries first.

    With ``group``, also at most ``per_group`` entries of one ``group(key, value)``:
    a new one past that drops the oldest of its group (the Table_map caches group by
    table: MySQL gives a reopened table a new table id, so a long log brings a stream
    of bodies that differ only in the id, and the old ones are not seen again)."""

    __slots__ = ("get", "touch", "_data", "_weights", "max_entries", "max_weight", "weight",
                 "_weigh", "_group", "per_group", "_groups")

    def __init__(self, max_entries: int, max_weight: int | None = None,
                 weigh: Callable[[K, V], int] | None = None,
                 group: Callable[[K, V], Hashable] | None = None, per_group: int = 4) -> None:
        self._group = group
        self.per_group = max(1, per_group)
        self._groups: dict[Hashable, list[K]] = {}
        # ordered by insertion with O(1) access to the oldest: a plain dict's
        # ``next(iter(d))`` walks over the slots its earlier drops left at the front
        self._data: OrderedDict[K, V] = OrderedDict()
        self._weights: dict[K, int] = {}
        #: the dict's own ``get``: a hit costs what a dict lookup costs
        self.get = self._data.get
        #: ``touch(key)``: what setting a key to the value it already holds does (it
        #: becomes the newest), at the cost of the dict's own ``move_to_end``
        self.touch = self._data.move_to_end
        self.max_entries = max_entries
        self.max_weight = max_weight if max_weight is not None else max_entries
        self._weigh = weigh
        self.weight = 0

    def __setitem__(self, key: K, value: V) -> None:
        data = self._data
        if data.get(key, _ABSENT) is value:
            # the same entry again (a Table_map per transaction): it only becomes the
            # newest - what dropping and adding it does, as nothing else is dropped
            del data[key]
            data[key] = value
            if self._group is not None:
                keys = self._groups[self._group(key, value)]
                keys.remove(key)
                keys.append(key)
            return
        w = self._weigh(key, value) if self._weigh is not None else 1
        weights = self._weights
        if key in data:
            self._drop(key)
        while data and (len(data) >= self.max_entries or self.weight + w > self.max_weight):
            self._drop(next(iter(data)))      # the oldest (O(1) in an OrderedDict)
        if w > self.max_weight:
            return                  # heavier than the whole cache: not kept
        data[key] = value
        weights[key] = w
        self.weight += w
        if self._group is not None:
            keys = self._groups.setdefault(self._group(key, value), [])
            keys.append(key)
            if len(keys) > self.per_group:
                self._drop(keys[0])

    def _drop(self, key: K) -> None:
        value = self._data.pop(key)
        self.weight -= self._weights.pop(key)
        if self._group is not None:
            g = self._group(key, value)
            keys = self._groups[g]
            keys.remove(key)
            if not keys:
                del self._groups[g]

    def __getitem__(self, key: K) -> V:
        return self._data[key]

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def values(self) -> Any:
        return self._data.values()

    def items(self) -> Any:
        return self._data.items()

    def clear(self) -> None:
        self._data.clear()
        self._weights.clear()
        self._groups.clear()
        self.weight = 0
