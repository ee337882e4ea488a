"""A simulated multi-primary group: who executed what, and what each member had seen.

Group Replication certifies a transaction against the *snapshot version* its
originating member had when it executed (``gtid_executed``, WL#6833). Logs
do not record that, so this module models it: transactions are assigned to
members (by their ``member`` field, else round-robin by session, else
round-robin by transaction), and a member has applied every positively
certified transaction except the last ``member_lag`` ones coming from other
members. With ``member_lag = 0`` nobody is ever behind and nothing conflicts;
with a lag, two members writing the same row within the lag window conflict,
and the later one loses (first committer wins).
"""

from __future__ import annotations

from collections import deque

from .gtidset import GtidSet
from .model import CertTransaction


class GroupSimulation:
    """Member assignment and snapshot versions for a simulated group."""

    __slots__ = ("members", "lag", "_by_session", "_count", "_applied_by_all", "_recent")

    def __init__(self, members: tuple[str, ...], lag: int) -> None:
        """:param members: member names (at least one).
        :param lag: how many most recently certified transactions a member may
            not have applied yet (its own are always applied).
        """
        self.members = members
        self.lag = lag
        self._by_session: dict[tuple[int, int], str] = {}
        self._count = 0
        self._applied_by_all = GtidSet()
        self._recent: deque[tuple[str, str]] = deque()

    def member_of(self, trx: CertTransaction) -> str:
        """The member the transaction originates from."""
        if trx.member is not None:
            return trx.member
        if trx.session is not None:
            member = self._by_session.get(trx.session)
            if member is None:
                member = self.members[len(self._by_session) % len(self.members)]
                self._by_session[trx.session] = member
            return member
        member = self.members[self._count % len(self.members)]
        self._count += 1
        return member

    def snapshot(self, member: str) -> GtidSet:
        """``gtid_executed`` of ``member`` now (without the incoming transaction)."""
        own = [gtid for gtid, origin in self._recent if origin == member]
        return self._applied_by_all.union(GtidSet.of(own)) if own else self._applied_by_all

    def certified(self, gtid: str, member: str) -> None:
        """Record a positively certified transaction."""
        self._recent.append((gtid, member))
        while len(self._recent) > self.lag:
            self._applied_by_all = self._applied_by_all.add(self._recent.popleft()[0])

    def stable(self) -> GtidSet:
        """The group's stable set: what every member has applied."""
        return self._applied_by_all
