"""What the slow tests need beside pytest, shared with the benchmarks that drive the same tools:

    apt.py       Debian packages installed where missing (as root, by apt-get)
    x11.py       Xvfb and xdotool: the labelling window driven from outside its process
    browser.py   headless Chromium under Selenium: the labelling page driven by a browser

Imported as ``tests.support.<module>`` (pytest.ini puts the checkout on sys.path; bench/gui_label_rate.py
and bench/web_label_rate.py put it there themselves). The suite imports nothing from bench/.
"""
