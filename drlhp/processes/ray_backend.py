"""--backend ray: the three roles as Ray actors, in place of drlhp.processes.launcher's processes. The same
interface to drlhp.run.pipeline.run_processes: ``create(cfg, run_dir) -> (Channels, RayGroup)``, and RayGroup
is a drlhp.processes.child.ChildGroup, as the local backend's ProcessGroup.

    actors     one per role, its class named after the role: PolicyActor, RewardPredictorActor,
               PrefInterfaceActor (Ray names a worker process ray::<class>: the policy's says "Policy");
               each runs the one child wrapper (drlhp.processes.child.run_child, as the local backend's
               processes) in one long task whose return value is its Report
    channels   drlhp.processes.ray_channels: one hub actor, same policies (segments dropped when full and counted,
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
               save; status "interrupted", exit 130), instead of Ray dying under them. Ray's shutdown would
               then wait 1 s per daemon before it kills it: ``shutdown_masked_ray`` kills them at once.
"""
from __future__ import annotations

import os
import signal
import socket
import time

import ray
from ray.exceptions import GetTimeoutError, RayError

from drlhp.processes.child import Child, ChildGroup, run_child
from drlhp.processes.messages import Report
from drlhp.processes.ray_channels import create_channels

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

    def run(self, child: Child) -> Report:
        def log(*args, **kw):
            print(*args, **{"flush": True, **kw})

        return run_child(child, log)


_ACTORS: dict[str, type] = {}


def actor_class(role: str) -> type:
    """The role's actor class, named after it ("reward_predictor": RewardPredictorActor)."""
    if role not in _ACTORS:
        name = "".join(word.title() for word in role.split("_")) + "Actor"
        _ACTORS[role] = type(name, (_Role,), {"__module__": __name__, "__qualname__": name})
    return _ACTORS[role]


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
    from drlhp.records.run_record import REPO_ROOT

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


class RayGroup(ChildGroup):
    def __init__(self, stop_event, hub, owns_ray: bool = False, run_dir=None):
        super().__init__(stop_event)  # stopped_by_signal stays empty: Ray workers take no SIGTERM from a terminal
        self.hub, self.owns_ray, self.run_dir = hub, owns_ray, run_dir
        self.nodes: dict[str, str] = {}
        self.options: dict[str, dict] = {}
        self.actors: dict = {}
        self.runs: dict = {}
        self._pid_refs: dict = {}

    def start(self, child: Child) -> None:
        """An actor for ``child`` (placed by its resources), running the child wrapper in one long task."""
        role = child.role
        self.options[role] = actor_options(child.resources)
        actor = ray.remote(actor_class(role)).options(**self.options[role]).remote()
        self.actors[role] = actor
        self._pid_refs[role] = actor.where.remote()
        self.runs[role] = actor.run.remote(child)

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
                        self._fail(role, f"its Ray actor did not start within {START_TIMEOUT_S:.0f} s "
                                         f"(does a node have its resources {self.options[role]}?)")
                except RayError as e:
                    self._fail(role, f"its Ray actor died: {type(e).__name__}")
        if self.run_dir:
            from drlhp.records.atomic import write_json

            write_json(os.path.join(self.run_dir, "ray_nodes.json"),
                       {"driver": ray.get_runtime_context().get_node_id(), **self.nodes})
        return pids

    def _set_stop(self) -> None:
        try:
            self.stop_event.set()
        except RayError:  # the hub is gone
            pass

    def _pending(self) -> dict:
        return {ref: role for role, ref in self.runs.items() if not self._reported(role)}

    def _poll(self, timeout: float) -> None:
        pending = self._pending()
        if not pending:
            time.sleep(timeout)
            return
        ready, _ = ray.wait(list(pending), num_returns=1, timeout=timeout)
        for ref in ready:
            role = pending[ref]
            try:
                report = ray.get(ref)
            except RayError as e:
                first = str(e).strip().splitlines()[0] if str(e).strip() else ""
                self._fail(role, f"its Ray actor died ({type(e).__name__}: killed, or out of memory?) {first}".strip())
            self._take(report)

    def _running(self) -> list[str]:
        return list(self._pending().values())

    def _kill_running(self) -> list[str]:
        """ray.kill every actor and the channels' hub; the local Ray this run started is shut down."""
        killed = self._running()
        for actor in [*self.actors.values(), self.hub]:
            try:
                ray.kill(actor)
            except RayError:
                pass
        if self.owns_ray:
            shutdown_masked_ray()
        return killed


def shutdown_masked_ray() -> None:
    """ray.shutdown for the local Ray ``create`` started, without its graceful wait. ray.shutdown sends each of
    its daemons SIGTERM, gives it 1 s to exit, then SIGKILLs it; the daemons here have SIGTERM blocked (see
    SIGTERM above), so every one of those waits ended in the SIGKILL (5.4 s against 1.6 s unmasked: docs/ray.md).
    The same SIGKILLs, at once: Ray's own shutdown (the driver disconnects first, then the daemons are killed in
    Ray's order) with its node told not to wait. Where Ray's private node object is not found, plain ray.shutdown."""
    try:
        from ray._private.worker import _global_node as node
    except ImportError:
        node = None
    kill_all = getattr(node, "kill_all_processes", None)
    if kill_all is not None:
        node.kill_all_processes = lambda check_alive=True, allow_graceful=False, wait=False: kill_all(
            check_alive=check_alive, allow_graceful=False, wait=wait)
    try:
        ray.shutdown()
    finally:
        if kill_all is not None:
            del node.kill_all_processes  # the instance's own attribute: the class's method again


def create(cfg, run_dir: str | None = None):
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
    return channels, RayGroup(channels.stop_event, hub, owns_ray=owns, run_dir=run_dir)
