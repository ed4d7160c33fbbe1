"""Headless Chromium driven by Selenium, for the tests and benchmarks of --labeller web.

    install_chromium()    Debian's chromium and chromium-driver present (apt-get installs them as root
                          where missing); None when they are, else why not
    chromium(width, height)  a context manager: a fresh headless Chromium (a Selenium WebDriver)

Chromium is a system package, not a pip one (Playwright's own browser download needs a host this
project's machines cannot reach), so `make`'s venv step does not need it; the browser tests install it
as the Xvfb tests install Xvfb (tests/support/x11.py), and skip with the reason only where that is impossible.
"""
from __future__ import annotations

import contextlib
import shutil

from tests.support.apt import apt_install

APT_PACKAGES = ("chromium", "chromium-driver")


def _binaries() -> tuple[str | None, str | None]:
    browser = next((shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)), None)
    return browser, shutil.which("chromedriver")


def install_chromium() -> str | None:
    if all(_binaries()):
        return None
    why = apt_install(APT_PACKAGES)
    if why:
        return why
    return None if all(_binaries()) else "chromium or chromedriver still missing after apt-get install"


@contextlib.contextmanager
def chromium(width: int = 1000, height: int = 700):
    """A headless Chromium under Selenium (Debian's chromedriver, not Selenium Manager's download)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser, driver_path = _binaries()
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                f"--window-size={width},{height}"):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(driver_path))
    try:
        yield driver
    finally:
        with contextlib.suppress(Exception):  # its last window closed already (a test closing the tab)
            driver.quit()
