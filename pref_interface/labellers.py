"""The labellers: who answers the preference interface's pairs, one table entry each.

    --labeller oracle   the synthetic oracle (pref_interface.oracle): true reward decides; headless
    --labeller window   a person, in the PyQt5 labelling window (pref_interface.human); needs a display
    --labeller web      a person (or several), in a browser (pref_interface.web); headless, the run
                        prints the page's address

Each labeller's ``run`` names its loop, "module:function", imported only in the preference interface's
process (so the parent never loads Qt or the web server). Every loop has one signature:

    loop(iface, log=print) -> figures

``iface`` (pref_interface.process.PrefInterface) gives it pairs and takes its answers, and holds the
process's ports (``iface.ports``: the stop event; for a person's status the predictor's version, the
database's size and the agent's episode). The loop returns when the stop event is set (or it sets it
itself: the person closed the window), and returns figures for
the run's summary. The process sends the "no more preferences" sentinel after it. A new labeller is one
module with such a loop, one entry here and its name in drlhp.config.labeller_names (as imitation's
``PreferenceGatherer`` and ``gatherer_cls``).

This module imports nothing heavy; the parent reads it (a display? the agent's episode?). The config, a
layer below the roles, takes the flag's choices from drlhp.config.labeller_names (tests/test_cli.py: the same names).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Labeller:
    name: str
    run: str  # "module:function": the labelling loop (see the module docstring)
    needs_display: bool  # the parent checks for one before starting anything (pref_interface.display)
    shows_agent: bool  # --show_agent means something: the labeller can show the agent's latest episode
    paces_policy: bool  # a person: the policy's steps wait for their labels (pref_interface.process)

    def loop(self):
        module, name = self.run.split(":")
        return getattr(importlib.import_module(module), name)


LABELLERS: dict[str, Labeller] = {labeller.name: labeller for labeller in (
    Labeller("oracle", "pref_interface.oracle:label_with_oracle", needs_display=False, shows_agent=False,
             paces_policy=False),
    Labeller("window", "pref_interface.human:label_in_window", needs_display=True, shows_agent=True,
             paces_policy=True),
    Labeller("web", "pref_interface.web:label_in_browser", needs_display=False, shows_agent=False,
             paces_policy=True),
)}
