"""The reward model's role: the ensemble, its trainer, its checkpoints and its process, the preference database.
"""
