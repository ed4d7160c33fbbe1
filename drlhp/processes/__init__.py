"""The process plumbing every role shares: the channels and each role's ports (``ports``), the messages that cross a
process boundary (``messages``; a segment's compact form on the wire: ``segment_wire``), the queues' policies
(``queues``), the one child wrapper (``child``), the backends that make processes and channels (``launcher``, the local
one; ``ray_backend`` and ``ray_channels``, Ray's), whether the parent is gone (``lifeline``), how a process stops
(``interrupts``), this process's set-up (``tf_setup``, ``cpu``), ``profiling`` and the output tee (``output_tee``).
It writes into a run's directory through drlhp.records, the layer below; nothing there imports it back.
"""
