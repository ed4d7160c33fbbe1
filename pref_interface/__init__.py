"""The preference interface: the segment pool and pair selection, the labellers, the schedule.

    pool.py       SegmentPool: recent segments, pairs never asked before (random or by ensemble variance)
    oracle.py     SyntheticOracle: the labeller that compares true reward
    schedule.py   LabelSchedule: how many labels may have been asked by a given time
    process.py    the preference-interface process: segment_queue -> pairs -> labeller -> preference_queue
  a person labels (Qt is imported only here, and only in the process where a person labels):
    display.py    can a window open here? (DISPLAY, X server, xcb libraries; no Qt import)
    answers.py    PairQueue: the pairs shown, the answers given, the held answer that undo takes back
    gui.py        the labelling window (python -m pref_interface.gui: screenshot, label a saved database)
    clip_view.py  a clip on screen (frames looping, scaled up sharp), the QApplication, screenshots
    human.py      the window in the preference-interface process, its loop in a Qt timer
    review.py     python -m pref_interface.review: relabel or delete pairs of a saved database
  a person labels in a browser (--labeller web; aiohttp is imported only in the serving process):
    web.py        the labelling page's server and loop (web_page.html)
    web_server.py what the pages share: the token guard, bounded JSON bodies, a clip as PNG, the socket
    review_web.py the review tool as a page (review_page.html)

This package knows nothing of the policy; it sees segments, and (for variance queries) the reward
predictor's published weights.
"""
