"""Watch kebab's Index view stay live in a real browser (headless Chromium
through Selenium) while `kebab serve --watch` runs: open the Index view,
print what it shows, wait for a line on stdin (the test changes a file
then), and print what it shows once its document count changed, with how
long that took as the page saw it.

usage: live.py BASE_URL   (then "go" on stdin)
Prints JSON lines: {"before"}, then {"after", "seconds"}.
"""

import json
import signal
import sys
import time

from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


def out_of_time(_signum, _frame):
    raise TimeoutError("the browser session ran past 120 s")


def shown(driver):
    return {
        "stats": driver.find_element(By.ID, "index-stats").text,
        "roots": [r.text for r in driver.find_elements(By.CSS_SELECTOR, "#index-roots tbody tr")],
    }


def main() -> None:
    signal.signal(signal.SIGALRM, out_of_time)
    signal.alarm(120)
    base = sys.argv[1]
    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    options.binary_location = "/usr/bin/chromium"
    service = webdriver.ChromeService(executable_path="/usr/bin/chromedriver")
    driver = webdriver.Chrome(options=options, service=service)
    try:
        driver.set_page_load_timeout(30)
        driver.get(base + "/")
        driver.find_element(By.CSS_SELECTOR, '.view-tab[data-view="index-view"]').click()
        WebDriverWait(driver, 20).until(
            lambda d: "documents" in d.find_element(By.ID, "index-stats").text)
        before = shown(driver)
        print(json.dumps({"before": before}, ensure_ascii=False), flush=True)
        sys.stdin.readline()
        started = time.monotonic()
        WebDriverWait(driver, 60, poll_frequency=0.1).until(
            lambda d: d.find_element(By.ID, "index-stats").text != before["stats"])
        print(json.dumps({"after": shown(driver), "seconds": time.monotonic() - started},
                         ensure_ascii=False), flush=True)
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
