"""Whole runs on a Dask cluster (``--executor dask`` / ``dask:ADDRESS``).

With a :class:`~vocencebench.executor.DaskExecutor` the run sends to the workers:

* every per-clip analysis unit (decode, ASR gate — Whisper included —, per-clip probes);
* the batched, model-backed probes (the classifiers), in batches of 32 clips;
* the synthesis of model systems (batched systems whose ``placement`` is ``"worker"``; the
  Qwen3/Parler adapters by default), in chunks of 16 requests.

Each unit carries its component as a :class:`~vocencebench._pipeline.stages.Handle`,
unpickled once per worker process and kept there, so a worker loads a model once for the
whole run. When the cluster advertises a ``GPU`` resource (``dask worker --resources
GPU=1``), model units ask for ``GPU=1`` and land only on those workers; CPU units go
anywhere. The SQLite cache, the
judge and I/O-bound synthesis (HTTP APIs, command lines) stay in the client.

A worker that dies mid-run loses only its in-flight units: the scheduler runs them again on
another worker, and since every unit is a pure function of its job, the scores are the
same bytes as a local run.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any, TypeVar

__all__ = ["DaskPlan", "submit"]

T = TypeVar("T")
R = TypeVar("R")

#: The worker resource that marks a GPU (``dask worker --resources GPU=1``).
GPU_RESOURCE = "GPU"


def submit(client: Any, fn: Any, item: Any, *, resources: dict[str, float] | None = None
           ) -> Future[Any]:
    """``client.submit(fn, item)`` as a :class:`concurrent.futures.Future` (cancelling it
    cancels the Dask task)."""
    dfut = client.submit(fn, item, pure=False, resources=resources)
    out: Future[Any] = Future()

    def done(f: Any) -> None:
        if out.cancelled():
            return
        try:
            res = f.result()
        except BaseException as exc:  # the unit's own error, or the task was cancelled
            if not out.cancelled():
                out.set_exception(exc)
            return
        if not out.cancelled():
            out.set_result(res)

    def cancelled(o: Future[Any]) -> None:
        if o.cancelled():
            dfut.cancel()

    out.add_done_callback(cancelled)
    dfut.add_done_callback(done)
    return out


class DaskPlan:
    """Where the units of one run go on a Dask cluster (see the module docstring)."""

    def __init__(self, executor: Any) -> None:
        self.executor = executor
        self.client = executor.client
        self._gpu: dict[str, float] | bool | None = False

    def gpu_resources(self) -> dict[str, float] | None:
        """``{"GPU": 1}`` when a worker of the cluster advertises a GPU, else None."""
        if self._gpu is False:
            try:
                info = self.client.scheduler_info()
                workers = info.get("workers", {}).values()
                has = any(GPU_RESOURCE in (w.get("resources") or {}) for w in workers)
            except Exception:  # pragma: no cover - a scheduler without the info
                has = False
            self._gpu = {GPU_RESOURCE: 1.0} if has else None
        return self._gpu if isinstance(self._gpu, dict) else None

    def wants_gpu(self, component: Any) -> bool:
        """Whether ``component`` (a transcriber) runs on a GPU and the cluster has one."""
        device = str(getattr(component, "device", "") or "")
        return self.gpu_resources() is not None and device.startswith(("cuda", "auto"))

    def default_placement(self, system: Any) -> str:
        """The system's ``placement`` hook when it has one (the model adapters declare
        ``worker``), else ``client`` (the eSpeak lanes fork processes, which a daemonic Dask
        worker may not)."""
        return "worker" if getattr(system, "placement", None) == "worker" else "client"

    def submit(self, fn: Any, job: Any, *, gpu: bool = False) -> Future[Any]:
        """One model unit on the cluster (on a GPU worker when there is one and ``gpu``)."""
        return submit(self.client, fn, job, resources=self.gpu_resources() if gpu else None)
