"""The wiring of the three roles, without TensorFlow: the role table, each role's ports cut from the run's
channels by name, the one child wrapper, and the local backend's group of children on a made-up role.

The same roles end to end, on both backends, are test_pipeline.py's.
"""
import ast
import threading
from dataclasses import fields, replace
from pathlib import Path

import pytest

from conftest import REPO
from drlhp.config import RunConfig
from drlhp.processes.child import Child, ChildFailed, run_child
from drlhp.processes.ports import Channels, PolicyPorts, PredictorPorts, PrefInterfacePorts, cut
from drlhp.run.roles import ROLES, children, unused_ports

CHANNELS = {f.name for f in fields(Channels)}


def _entry_def(entry: str) -> ast.FunctionDef:
    module, name = entry.split(":")
    path = REPO / Path(*module.split(".")).with_suffix(".py")
    tree = ast.parse(path.read_text())
    return next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)


def test_every_port_is_a_channel_of_the_same_name_and_every_channel_has_a_role():
    used = set()
    for ports in (PolicyPorts, PrefInterfacePorts, PredictorPorts):
        names = {f.name for f in fields(ports)}
        assert names <= CHANNELS, names - CHANNELS
        assert "stop_event" in names
        used |= names
    assert used == CHANNELS, CHANNELS - used  # no channel nobody is handed


def test_the_role_table_entry_points_take_cfg_ports_run_dir_log_and_little_else():
    cfg = RunConfig(mode="train_policy_with_preferences", env="MovingDot-v0")
    assert [r.name for r in ROLES] == ["reward_predictor", "pref_interface", "policy"]  # the start order
    for role in ROLES:
        fn = _entry_def(role.entry)
        args = fn.args
        names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
        assert names[:4] == ["cfg", "ports", "run_dir", "log"], (role.name, names)
        assert len(names) <= 5, (role.name, names)
        assert fn.args.args[1].annotation.id == role.ports.__name__
        assert set(role.extra(cfg)) <= set(names), (role.name, role.extra(cfg))  # what the parent passes
        required = {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is None}
        assert required <= set(role.extra(cfg)), role.name


def test_each_labeller_loop_takes_the_interface_and_a_log_and_each_role_class_its_ports():
    """A labeller's loop reads its ports from the interface (``iface.ports``); each role's inner class takes
    its ports object and a few grouped arguments, not loose channels and callables (issue 32)."""
    from pref_interface.labellers import LABELLERS

    for labeller in LABELLERS.values():
        args = _entry_def(labeller.run).args
        assert [a.arg for a in args.args[:2]] == ["iface", "log"], labeller.name
        assert len(args.defaults) == len(args.args) - 1, labeller.name  # after iface: defaults (test knobs)
    for path, name, ports in (("drlhp/policy/loop.py", "PolicyTrainer", "PolicyPorts"),
                              ("pref_interface/process.py", "PrefInterface", "PrefInterfacePorts"),
                              ("drlhp/reward/process.py", "RewardPredictorProcess", "PredictorPorts")):
        tree = ast.parse((REPO / path).read_text())
        cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)
        init = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
        params = init.args.args[1:] + init.args.kwonlyargs
        assert len(params) <= 5, (name, [a.arg for a in params])
        assert [a.annotation.id for a in params if a.arg == "ports"] == [ports], name


def test_ports_are_cut_by_name_and_what_the_run_does_not_use_is_none():
    channels = Channels.make(lambda name, kind: f"{kind}:{name}")
    ports = cut(PrefInterfacePorts, channels, {"agent_episode", "weights_to_policy"})
    assert ports.segment_queue == "queue:segment_queue" and ports.weights_to_prefs == "latest:weights_to_prefs"
    assert ports.agent_episode is None
    cfg = RunConfig(mode="train_policy_with_preferences", env="MovingDot-v0")
    assert unused_ports(cfg) == {"agent_episode", "weights_to_prefs"}  # no --show_agent, no variance-picked pairs
    cfg = replace(cfg, prefs=replace(cfg.prefs, query_selection="variance", labeller="window", show_agent=True))
    assert unused_ports(cfg) == set()
    kids = {c.role: c for c in children(cfg, channels, "/runs/x", None)}
    assert kids["reward_predictor"].ports.weights_to_prefs == kids["pref_interface"].ports.weights_to_prefs
    assert kids["policy"].ports.agent_episode == kids["pref_interface"].ports.agent_episode == "latest:agent_episode"
    assert kids["reward_predictor"].extra == {"predictor_input": ((84, 84, 4), "uint8")}
    assert kids["pref_interface"].extra == {"frames_per_step": 1} and kids["policy"].extra == {}


# ---- the child wrapper, and the local backend's group, on made-up roles --------------------------

def made_up_role(cfg, ports, run_dir, log=print, *, answer: int = 0) -> dict:
    log(f"[made_up] in {run_dir}")
    return {"answer": answer}


def made_up_role_that_fails(cfg, ports, run_dir, log=print) -> dict:
    raise ValueError("no  such\nthing")


def test_the_child_wrapper_turns_a_role_into_its_report():
    stop = threading.Event()
    lines = []
    report = run_child(Child("made_up", "test_ports:made_up_role", None, PolicyPorts(stop_event=stop), "/x",
                             {"answer": 42}), log=lambda *a, **k: lines.append(a[0]))
    assert (report.role, report.kind, report.figures) == ("made_up", "done", {"answer": 42})
    assert lines == ["[made_up] in /x"] and not stop.is_set()
    report = run_child(Child("made_up", "test_ports:made_up_role_that_fails", None, PolicyPorts(stop_event=stop),
                             "/x"), log=lambda *a, **k: lines.append(a[0]))
    assert report.kind == "error" and report.text == "ValueError: no such thing"
    assert "Traceback" in report.figures["traceback"] and "crashed" in lines[-1]
    assert stop.is_set()  # the other roles stop


@pytest.mark.parametrize("entry", ["made_up_role", "made_up_role_that_fails"])
def test_the_local_backend_runs_a_role_in_a_process_through_the_child_wrapper(tmp_path, entry):
    from drlhp.processes.launcher import create

    channels, group = create(RunConfig(env="MovingDot-v0"), str(tmp_path))
    group.start(Child("made_up", f"test_ports:{entry}", None, PolicyPorts(stop_event=channels.stop_event),
                      str(tmp_path), {"answer": 7} if entry == "made_up_role" else {}))
    assert set(group.pids()) == {"made_up"}
    try:
        if entry == "made_up_role":
            group.watch({"made_up"})
            assert group.figures == {"made_up": {"answer": 7}} and not channels.stop_event.is_set()
        else:
            with pytest.raises(ChildFailed, match="the made_up process failed: ValueError: no such thing"):
                group.watch({"made_up"})
            assert channels.stop_event.is_set()
    finally:
        assert group.shutdown() == []  # nothing had to be killed
