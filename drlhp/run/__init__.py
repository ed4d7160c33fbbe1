"""The run's orchestration, the parent's layer: ``cli`` (run.py's and the ``drlhp`` command's entry: arguments ->
config -> pipeline), ``pipeline`` (a mode as a recorded run; the table of the five modes), ``checks`` (every input
checked before a run starts), ``modes`` (the modes of one process), ``parent`` (the parent's run of the three
processes), ``roles`` (the role table: each child's entry point as a "package.module:function" string), ``outcome``
(how a run ends: summary, status, exit code)."""
