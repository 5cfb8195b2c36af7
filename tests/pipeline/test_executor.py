from __future__ import annotations

import os
from pathlib import Path

import pytest

from vocencebench.errors import ConfigError
from vocencebench.executor import DaskExecutor, LocalExecutor, SerialExecutor
from vocencebench.specs import make_executor


def _square(x: int) -> tuple[int, int]:
    return x * x, os.getpid()


def _contract(exe) -> None:
    items = list(range(23))
    got = dict(exe.map_unordered(_square, items, max_in_flight=3))
    assert sorted(got) == items
    assert [got[i][0] for i in items] == [x * x for x in items]


def test_serial_contract() -> None:
    _contract(SerialExecutor())


def test_local_pool_contract_uses_other_processes() -> None:
    exe = LocalExecutor(2)
    try:
        _contract(exe)
        pids = {pid for _, (_, pid) in exe.map_unordered(_square, range(8))}
        assert os.getpid() not in pids
    finally:
        exe.close()


@pytest.mark.slow
def test_dask_local_cluster_contract() -> None:
    pytest.importorskip("distributed")
    exe = DaskExecutor(workers=2)
    try:
        _contract(exe)
    finally:
        exe.close()


def test_make_executor() -> None:
    assert isinstance(make_executor(None, workers=1), SerialExecutor)
    exe = make_executor("local", workers=2)
    assert isinstance(exe, LocalExecutor)
    exe.close()
    with pytest.raises(ConfigError, match="unknown executor 'ray'"):
        make_executor("ray")


def test_a_bad_dask_address_is_one_config_error_without_its_credentials() -> None:
    """Client(address) raised a bare ValueError (a traceback on the CLI), and printed the
    password of a tcp://user:password@ address."""
    pytest.importorskip("distributed")
    with pytest.raises(ConfigError, match="carries no credentials") as err:
        DaskExecutor("tcp://bob:hunter2pass@127.0.0.1:1")
    assert "hunter2pass" not in str(err.value)
    with pytest.raises(ConfigError, match="cannot reach the Dask scheduler 'nonsense'"):
        DaskExecutor("nonsense")


@pytest.mark.parametrize("address", ["bob:hunter2pass@127.0.0.1:8786",
                                     "tls://bob:hunter2pass@10.0.0.5:8786/",
                                     "hunter2pass@127.0.0.1:8786"])
def test_credentials_in_a_dask_address_are_refused_masked_before_anything_starts(
        address: str, tmp_path: Path) -> None:
    # Without a scheme the password was printed; and the run's folder was claimed first.
    from vocencebench.cli import main
    from vocencebench.specs import validate_executor_spec

    pytest.importorskip("distributed")
    with pytest.raises(ConfigError, match=r"carries no credentials: '(tls://)?\[REDACTED\]@"
                       ) as err:
        validate_executor_spec(f"dask:{address}")
    assert "hunter2pass" not in str(err.value)
    out = tmp_path / "run"
    assert main(["run", "--system-a", "espeak-flat", "--system-b", "espeak-follow",
                 "--executor", f"dask:{address}", "--limit", "1", "--out", str(out)]) == 2
    assert not out.exists()
