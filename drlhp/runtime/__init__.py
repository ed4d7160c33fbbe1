"""The runtime every role shares: the channels and each role's ports (ports.py), the one child wrapper
(child.py), the launcher, queues and messages between processes (a segment's compact
form on the wire: segment_wire.py), the run record, metrics, atomic files, profiling, output tee, the CPU
(cpu.py) and TensorFlow set-up.
"""
