"""Library glue of issue 4: reader transactions -> simulator transactions, cost specs."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from repltool.binlog import read_events, read_transactions
from repltool.binlog.transactions import group_transactions
from repltool.errors import InputError, SimulationError, UsageError
from repltool.schedule import (CommitTimestampCost, ConstantCost, CsvCost, LinearCost,
                               SimConfig, simulate)
from repltool.schedule.source import (ROWS_CAVEAT, CrashSpec, SourceRotations, SourceStats,
                                      cost_description, parse_cost, read_sim_transactions,
                                      transactions_to_sim)

from schedule_cli_data import RELAY_1, RELAY_2, RELAY_NEW_SOURCE

WL13352 = ("mysql/mysql80/mysql-test__std_data__upgrade__data_wl13352_8015.zip__"
           "data_upgrade__binlog.000002")
SHYIKO = "mysql/shyiko/src__test__resources__mysql-bin.checksum-none"
MYSQL56_GTID = "mysql/mysql80/mysql-test__std_data__binlog_transaction_with_GTID.000001"
MARIADB = "mysql/rmc/test-data__binlogs__mariadb-bin.000001"
RELAY_80 = "mysql/mysql80/mysql-test__std_data__rpl_no_gipk_low_column_number.000001"
RELAY_57 = "mysql/mysql80/mysql-test__std_data__rpl_gipk_equivalent_key.000001"


def test_fields_are_copied_as_recorded(corpus: Path) -> None:
    """lc/sn as logged; size, events, commit_ts, rows events and the position are copied."""
    path = corpus / WL13352
    trxs = list(read_transactions(path))
    sims = list(transactions_to_sim(trxs))
    assert len(sims) == 58
    for trx, sim in zip(trxs, sims):
        assert (sim.last_committed, sim.sequence_number) == (trx.last_committed,
                                                             trx.sequence_number)
        assert (sim.size, sim.events, sim.gtid, sim.pos) == (trx.size, trx.num_events,
                                                             trx.gtid, trx.start)
        assert sim.commit_ts == trx.immediate_commit_timestamp
        assert sim.rows == sum(n for _, n in trx.rows_events)
        assert sim.cost == 0.0
    assert [s.new_source_file for s in sims] == [True] + [False] * 57
    assert any(s.rows for s in sims) and all(s.commit_ts for s in sims)


def test_cost_model_is_applied(corpus: Path) -> None:
    sims = list(read_sim_transactions([corpus / SHYIKO], ConstantCost(0.25)))
    assert len(sims) == 40 and {s.cost for s in sims} == {0.25}
    linear = list(read_sim_transactions([corpus / SHYIKO], LinearCost()))
    assert all(s.cost == LinearCost().cost(s) > 0 for s in linear)


def test_binlogs_start_a_source_file_at_every_file(sample_logs: list[Path]) -> None:
    stats = SourceStats()
    sims = list(read_sim_transactions(sample_logs, stats=stats))
    assert len(sims) == 200 and stats.source_files == 2 and not stats.relay_log
    starts = [i for i, s in enumerate(sims) if s.new_source_file]
    assert starts == [0, 100]
    assert (sims[100].last_committed, sims[100].sequence_number) == (0, 1)


def test_relay_log_source_rotations(relay_logs: list[Path]) -> None:
    """A source Rotate starts a new source file; a relay-file boundary does not, so the
    numbering that goes on in relay-bin.000002 is neither a barrier nor an error."""
    stats = SourceStats()
    sims = list(read_sim_transactions(relay_logs, stats=stats))
    clocks = [c for c in RELAY_1 + RELAY_2 if c is not None]
    assert [(s.last_committed, s.sequence_number) for s in sims] == clocks
    assert [s.new_source_file for s in sims] == RELAY_NEW_SOURCE
    assert stats.relay_log and stats.source_files == 2
    result = simulate(sims, SimConfig(workers=4))
    # barriers: the first trx of each source file and the (0, x) ones: #0, #3
    assert result.barriers == 2


def test_relay_logs_without_the_watcher_reset_at_each_file(relay_logs: list[Path]) -> None:
    """relay=None is the binlog rule (every file is a source file): documented as too
    pessimistic for relay logs, and it misses the rotation inside relay-bin.000001."""
    sims = list(transactions_to_sim(read_transactions(relay_logs)))
    assert [s.new_source_file for s in sims] == [True] + [False] * 4 + [True, False, False]


def test_watcher_on_real_relay_logs(corpus: Path) -> None:
    """MySQL 8.0 and 5.7 relay logs: the fake Rotate opens the source file."""
    for name in (RELAY_80, RELAY_57):
        rotations = SourceRotations()
        trxs = group_transactions(rotations.watch(read_events(corpus / name)))
        sims = list(transactions_to_sim(trxs, relay=rotations))
        assert rotations.is_relay(str(corpus / name))
        assert [(s.last_committed, s.sequence_number, s.new_source_file) for s in sims] == [
            (0, 1, True)]


def test_truncated_transactions_are_skipped_and_counted(corpus: Path) -> None:
    trxs = list(read_transactions(corpus / WL13352))
    trxs[0] = dataclasses.replace(trxs[0], truncated=True)
    trxs[10] = dataclasses.replace(trxs[10], truncated=True)
    stats = SourceStats()
    sims = list(transactions_to_sim(trxs, stats=stats))
    assert stats.truncated_skipped == 2 and stats.transactions == len(sims) == 56
    # the source-file start carries over to the first transaction kept
    assert sims[0].new_source_file and sims[0].gtid == trxs[1].gtid


def test_log_without_clock_is_an_error(corpus: Path) -> None:
    """5.6 GTIDs and MariaDB GTIDs carry no last_committed/sequence_number."""
    for name in (MYSQL56_GTID, MARIADB):
        with pytest.raises(SimulationError, match="carries no logical clock") as info:
            list(read_sim_transactions([corpus / name]))
        assert "--retag" in str(info.value) and info.value.exit_code == 1
        with pytest.raises(SimulationError, match="carries no logical clock"):
            list(read_sim_transactions([corpus / name], lenient=True))


def test_lenient_schedules_clockless_transactions_as_barriers(corpus: Path) -> None:
    trxs = list(read_transactions(corpus / WL13352))
    trxs[5] = dataclasses.replace(trxs[5], last_committed=None, sequence_number=None)
    with pytest.raises(SimulationError, match=r"transaction #5 .*no logical clock"):
        list(transactions_to_sim(trxs))
    stats = SourceStats()
    sims = list(transactions_to_sim(trxs, lenient=True, stats=stats))
    assert (sims[5].last_committed, sims[5].sequence_number) == (0, 0)
    assert stats.without_clock == 1
    assert stats.warnings == ["1 transactions without a logical clock scheduled as barriers"]


@pytest.mark.parametrize("spec, model", [
    ("constant", ConstantCost()), ("constant:0.5", ConstantCost(0.5)),
    ("linear", LinearCost()), ("commit-ts", CommitTimestampCost()),
    ("LINEAR", LinearCost()),
])
def test_parse_cost(spec: str, model: object) -> None:
    assert parse_cost(spec) == model


def test_parse_cost_csv(tmp_path: Path) -> None:
    path = tmp_path / "costs.csv"
    path.write_text("gtid,seconds\nu:1,0.5\n")
    model = parse_cost(f"csv:{path}")
    assert isinstance(model, CsvCost) and model.costs == {"u:1": 0.5}
    with pytest.raises(InputError):
        parse_cost(f"csv:{tmp_path / 'missing.csv'}")


@pytest.mark.parametrize("spec", ["", "quadratic", "constant:x", "constant:-1",
                                  "constant:inf", "csv:", "linear:x", "linear:1,-2",
                                  "commit-ts:1"])
def test_parse_cost_rejects(spec: str) -> None:
    with pytest.raises(UsageError, match="--cost"):
        parse_cost(spec)


def test_linear_description_says_rows_are_rows_events() -> None:
    assert ROWS_CAVEAT in cost_description(LinearCost())
    assert ROWS_CAVEAT not in cost_description(ConstantCost())


@pytest.mark.parametrize("text, spec", [
    ("#12", CrashSpec(index=12)), ("0.25", CrashSpec(time=0.25)), ("3", CrashSpec(time=3.0)),
    ("3e11fa47-71ca-11e1-9e33-c80aa9429562:5",
     CrashSpec(gtid="3e11fa47-71ca-11e1-9e33-c80aa9429562:5")),
    ("ANONYMOUS", CrashSpec(gtid="ANONYMOUS")),
])
def test_crash_spec(text: str, spec: CrashSpec) -> None:
    assert CrashSpec.parse(text) == spec


@pytest.mark.parametrize("text", ["#", "#x", "#-1", "-0.5", "nan", " "])
def test_crash_spec_rejects(text: str) -> None:
    with pytest.raises(UsageError, match="--crash-at"):
        CrashSpec.parse(text)
