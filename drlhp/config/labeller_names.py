"""The labellers' names, for the config's --labeller flag; imports nothing.

Each name's loop ("module:function") and what it needs (a display; whether it can show the agent) is its
entry in pref_interface.labellers.LABELLERS, a layer up: that table's strings import the preference
interface's modules, which the config, below the roles, may not (tests/test_boundaries.py). A new labeller
is its module, its entry there and its name here; tests/test_cli.py checks that the two agree.
"""
LABELLER_NAMES = ("oracle", "window", "web")
PERSON_LABELLERS = ("window", "web")  # a person watches the clips: MuJoCo segments carry states to draw them from
DEFAULT_LABELLER = "window"
