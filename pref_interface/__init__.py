"""The preference interface: segment pool, pair selection, synthetic oracle, PyQt5 labelling GUI.

Arrives with step 2 (the preference pipeline) and step 4 (the GUI); nothing here yet.
"""
