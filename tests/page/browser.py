"""What the page tests share: a headless Chromium (Debian's `chromium` and
`chromium-driver`) driven by Selenium, within a time bound."""

import contextlib
import signal

from selenium import webdriver


@contextlib.contextmanager
def chromium(seconds: int):
    """A headless Chromium at about:blank (pages load within 30 s), ended
    with its driver when the block ends — or when `seconds` pass, whatever
    the browser does (the alarm raises TimeoutError into the block)."""

    def out_of_time(_signum, _frame):
        raise TimeoutError(f"the browser session ran past {seconds} s")

    signal.signal(signal.SIGALRM, out_of_time)
    signal.alarm(seconds)
    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    options.binary_location = "/usr/bin/chromium"
    service = webdriver.ChromeService(executable_path="/usr/bin/chromedriver")
    driver = webdriver.Chrome(options=options, service=service)
    try:
        driver.set_page_load_timeout(30)
        yield driver
    finally:
        driver.quit()
        signal.alarm(0)
