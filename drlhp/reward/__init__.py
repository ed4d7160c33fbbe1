"""The reward model's role: the ensemble, its trainer and process, the preference database.
"""
