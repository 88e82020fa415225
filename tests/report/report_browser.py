"""Start headless Chromium through Selenium for the report tests and the benchmark (no network)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--no-first-run",
    "--no-default-browser-check",
    # Any network request goes to a closed port on loopback and fails; file:// is not proxied.
    "--proxy-server=http://127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
    "--window-size=1400,1800",
)


def find_chromium() -> tuple[str, str] | str:
    """(browser, driver) paths, or the reason they are unavailable."""
    browser = next(
        (
            p
            for p in (
                os.environ.get("RAGRADE_CHROMIUM"),
                shutil.which("chromium"),
                shutil.which("chromium-browser"),
            )
            if p
        ),
        None,
    )
    driver = next(
        (p for p in (os.environ.get("RAGRADE_CHROMEDRIVER"), shutil.which("chromedriver")) if p), None
    )
    if browser is None:
        return "Chromium is not installed (Debian: apt-get install -y chromium chromium-driver)"
    if driver is None:
        return "chromedriver is not installed (Debian: apt-get install -y chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install selenium)"
    return browser, driver


def start_chromium(user_data_dir: Path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    found = find_chromium()
    if isinstance(found, str):
        raise RuntimeError(found)
    browser, driver = found
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={user_data_dir}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver), options=options)


def open_report(drv, path: Path, timeout: float = 60.0) -> float:
    """Open ``path`` and wait until the page script has rendered; return the seconds it took."""
    import time

    from selenium.webdriver.support.ui import WebDriverWait

    start = time.perf_counter()
    drv.get(path.resolve().as_uri())
    WebDriverWait(drv, timeout).until(lambda d: d.execute_script("return document.body.dataset.ready") == "1")
    return time.perf_counter() - start
