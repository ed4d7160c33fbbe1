"""--backend ray: the three roles as Ray actors, in place of drlhp.runtime.launcher's processes. The same
interface to drlhp.pipeline.run_processes: ``create(cfg, ...) -> (Channels, RayGroup)``, and RayGroup has
ProcessGroup's start / watch / shutdown / figures / stopped_by_signal / pids, and raises ChildFailed.

    actors     PolicyActor, RewardPredictorActor, PrefInterfaceActor (Ray names a worker process
               ray::<class>: the policy's says "Policy"); each runs its role's function (the same as the
               local backend's) in one long task whose return value is its Report
    channels   drlhp.runtime.ray_channels: one hub actor, same policies (segments dropped when full and counted,
               preferences blocking, weights latest-wins, the stop flag)
    placement  --policy_resources / --predictor_resources / --labeller_resources: JSON dicts of Ray resources
               ("CPU" -> num_cpus, "GPU" -> num_gpus, anything else a custom resource)
    failures   a role that raises reports its error and sets the stop flag; an actor whose worker dies
               (killed, out of memory) fails its task with a RayActorError: either is ChildFailed
    files      every role writes into --run_dir by its absolute path, on the node it runs on. On one
               machine (a local Ray, or cluster_utils' simulated nodes) that is the run directory. On a
               real cluster --run_dir must be on a filesystem every node mounts at the same path (NFS):
               nothing copies files written on another node back.
    address    --ray_address is tried (a TCP connection, ADDRESS_TIMEOUT_S) before ray.init, which has no
               time limit of its own: nothing there is one line and exit 2, not minutes of GCS time-outs
    SIGTERM    the local Ray this run starts has SIGTERM blocked in every process (daemons and actors' workers
               inherit the mask): a SIGTERM to the run's process group (``timeout``, ``kill -TERM -PGID``)
               reaches the driver alone, which stops the roles through the stop flag, as for Ctrl-C (they
               save; status "interrupted", exit 130), instead of Ray dying under them. Ray's shutdown then
               waits about 1 s per daemon before it kills it.
"""
from __future__ import annotations

import os
import signal
import socket
import sys
import time
import traceback

import ray
from ray.exceptions import GetTimeoutError, RayError

from drlhp.runtime.launcher import ChildFailed
from drlhp.runtime.messages import Report
from drlhp.runtime.ray_channels import create_channels

START_TIMEOUT_S = 180.0  # an actor not started by then: no node has its resources, or the cluster is stuck
ADDRESS_TIMEOUT_S = 5.0  # --ray_address: a TCP connection to it, tried before ray.init


class _Role:
    def __init__(self):
        try:  # the driver handles Ctrl-C through the stop flag, as launcher's children do
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        except ValueError:  # not the main thread
            pass

    def where(self) -> tuple[int, str]:
        return os.getpid(), ray.get_runtime_context().get_node_id()

    def run(self, role: str, target: str, kwargs: dict, stop_flag, profile_dir=None) -> Report:
        import importlib

        from drlhp.runtime.profiling import profiled

        def log(*args, **kw):
            print(*args, **{"flush": True, **kw})

        try:
            module, name = target.split(":")
            fn = getattr(importlib.import_module(module), name)
            with profiled(profile_dir, role):
                figures = fn(**kwargs, log=log)
            return Report(role, "done", figures=figures or {})
        except BaseException as e:  # noqa: BLE001 -- every failure is the role's report
            detail = traceback.format_exc()
            log(f"[{role}] crashed:\n{detail}", file=sys.stderr)
            try:
                stop_flag.set()
            except Exception:  # noqa: BLE001 -- the hub is gone too; the driver notices anyway
                pass
            return Report(role, "error", text=f"{type(e).__name__}: {' '.join(str(e).split())}",
                          figures={"traceback": detail})


class PolicyActor(_Role):
    pass


class RewardPredictorActor(_Role):
    pass


class PrefInterfaceActor(_Role):
    pass


ACTORS = {"policy": PolicyActor, "reward_predictor": RewardPredictorActor, "pref_interface": PrefInterfaceActor}
RESOURCE_FIELDS = {"policy": "policy_resources", "reward_predictor": "predictor_resources",
                   "pref_interface": "labeller_resources"}


def actor_options(resources: dict | None) -> dict:
    """Ray actor options from a --*_resources dict."""
    resources = dict(resources or {})
    options = {"max_restarts": 0}
    if "CPU" in resources:
        options["num_cpus"] = resources.pop("CPU")
    if "GPU" in resources:
        options["num_gpus"] = resources.pop("GPU")
    if resources:
        options["resources"] = resources
    return options


def init_kwargs(address: str | None = None) -> dict:
    """ray.init's arguments: the workers import this checkout (not another copy on their path)."""
    from drlhp.runtime.run_record import REPO_ROOT

    path = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {"address": address, "include_dashboard": False, "log_to_driver": True,
            "runtime_env": {"env_vars": {"PYTHONPATH": path, "TF_CPP_MIN_LOG_LEVEL":
                                         os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2")}}}


def address_problem(address: str | None, timeout_s: float = ADDRESS_TIMEOUT_S) -> str | None:
    """Why the Ray cluster ray.init would join cannot be reached, in one line, or None (it answers, or
    a local Ray will be started). ``address`` is --ray_address; as ray.init, RAY_ADDRESS stands in for
    None and "auto", and "auto" finds the cluster running on this machine."""
    from ray._private.services import canonicalize_bootstrap_address

    given = address or os.environ.get("RAY_ADDRESS") or None
    if given is None or given == "local":
        return None
    name = f"--ray_address {address}" if address else f"RAY_ADDRESS {given}"
    try:
        target = given.split("://", 1)[1] if "://" in given else canonicalize_bootstrap_address(given)
    except (ConnectionError, ValueError) as e:  # "auto" with no cluster running here
        return f"{name}: {' '.join(str(e).split())}"
    if target is None:
        return None
    host, _, port = target.rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except ValueError:
        return f"{name}: give HOST:PORT (the head node's GCS port, 6379 by default) or auto"
    except OSError as e:
        why = f"no answer within {timeout_s:g} s" if isinstance(e, TimeoutError) else (e.strerror or type(e).__name__)
        tried = "" if target == given else f", tried as {target}"  # Ray's own reading of localhost
        return (f"{name}: no Ray cluster answers there ({why}{tried}); start one with `ray start --head`, or "
                f"leave --ray_address out to start a local Ray")
    return None


class RayGroup:
    def __init__(self, channels, hub, cfg, profile_dir=None, owns_ray: bool = False, run_dir=None):
        self.ch, self.hub, self.cfg, self.run_dir = channels, hub, cfg, run_dir
        self.nodes: dict[str, str] = {}
        self.profile_dir, self.owns_ray = profile_dir, owns_ray
        self.actors: dict = {}
        self.runs: dict = {}
        self._pid_refs: dict = {}
        self.figures: dict[str, dict] = {}
        self.failed: set[str] = set()
        self.stopped_by_signal: set[str] = set()  # Ray workers take no SIGTERM from a terminal

    def start(self, role: str, target: str, **kwargs) -> None:
        options = actor_options(getattr(self.cfg, RESOURCE_FIELDS[role]))
        actor = ray.remote(ACTORS[role]).options(**options).remote()
        self.actors[role] = actor
        self._pid_refs[role] = actor.where.remote()
        self.runs[role] = actor.run.remote(role, target, kwargs, self.ch.stop_event, self.profile_dir)

    def pids(self) -> dict[str, int]:
        """Each actor's worker pid on its node (waits for the actors to start); their Ray node ids go to
        self.nodes and <run_dir>/ray_nodes.json."""
        deadline = time.monotonic() + START_TIMEOUT_S
        pids = {}
        for role, ref in self._pid_refs.items():
            while role not in pids:
                self._poll(0.0)
                try:
                    pids[role], self.nodes[role] = ray.get(ref, timeout=1.0)
                except GetTimeoutError:
                    if time.monotonic() > deadline:
                        wanted = actor_options(getattr(self.cfg, RESOURCE_FIELDS[role]))
                        self._fail(role, f"its Ray actor did not start within {START_TIMEOUT_S:.0f} s "
                                         f"(does a node have its resources {wanted}?)")
                except RayError as e:
                    self._fail(role, f"its Ray actor died: {type(e).__name__}")
        if self.run_dir:
            from drlhp.runtime.atomic import write_json

            write_json(os.path.join(self.run_dir, "ray_nodes.json"),
                       {"driver": ray.get_runtime_context().get_node_id(), **self.nodes})
        return pids

    def _fail(self, role: str, message: str, detail: str = ""):
        self.failed.add(role)
        try:
            self.ch.stop_event.set()
        except RayError:
            pass
        raise ChildFailed(role, message, detail)

    def _handle(self, role: str) -> None:
        try:
            report = ray.get(self.runs[role])
        except RayError as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            self._fail(role, f"its Ray actor died ({type(e).__name__}: killed, or out of memory?) {first}".strip())
        if report.kind == "error":
            self._fail(role, report.text, (report.figures or {}).get("traceback", ""))
        self.figures[role] = report.figures or {}

    def _pending(self) -> dict:
        return {ref: role for role, ref in self.runs.items() if role not in self.figures and role not in self.failed}

    def _poll(self, timeout: float) -> None:
        pending = self._pending()
        if not pending:
            time.sleep(timeout)
            return
        ready, _ = ray.wait(list(pending), num_returns=1, timeout=timeout)
        for ref in ready:
            self._handle(pending[ref])

    def watch(self, until_done: set[str]) -> None:
        while not until_done <= set(self.figures):
            self._poll(0.2)

    def shutdown(self, timeout: float = 60.0, after_failure_timeout: float = 10.0) -> list[str]:
        """Set the stop flag, wait for every role to save and return, kill what has not; stop the hub
        (and the local Ray this run started). ChildFailed for an error reported while stopping."""
        if self.failed:
            timeout = min(timeout, after_failure_timeout)
        try:
            self.ch.stop_event.set()
        except RayError:
            pass
        deadline = time.monotonic() + timeout
        failure = None
        while self._pending() and time.monotonic() < deadline:
            try:
                self._poll(0.2)
            except ChildFailed as e:
                failure = failure or e
        killed = [role for role in self._pending().values()]
        for actor in [*self.actors.values(), self.hub]:
            try:
                ray.kill(actor)
            except RayError:
                pass
        if self.owns_ray:
            ray.shutdown()
        if failure is not None:
            raise failure
        return killed


def create(cfg, profile_dir=None, run_dir=None):
    """Join (or start) Ray, make the channels' hub: (Channels, RayGroup)."""
    owns = not ray.is_initialized()
    if owns:
        # Every process ray.init starts inherits this thread's signal mask: SIGTERM blocked, a SIGTERM to
        # the group is the driver's to act on (see SIGTERM above). ray.init also sets this process's
        # SIGTERM handler (sys.exit): the run's own is put back.
        handler = signal.getsignal(signal.SIGTERM)
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        try:
            ray.init(**init_kwargs(cfg.ray_address))
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            signal.signal(signal.SIGTERM, handler)
    channels, hub = create_channels(cfg.prefs.segment_queue_size)
    return channels, RayGroup(channels, hub, cfg, profile_dir, owns_ray=owns, run_dir=run_dir)
