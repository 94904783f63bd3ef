"""Watch kebab's Index view stay live in a real browser (headless Chromium
through Selenium) while `kebab serve --watch` runs: open the Index view,
print what it shows, wait for a line on stdin (the test changes a file
then), and print what it shows once its document count changed, with how
long that took as the page saw it.

usage: live.py BASE_URL   (then "go" on stdin)
Prints JSON lines: {"before"}, then {"after", "seconds"}.
"""

import json
import sys
import time

from browser import chromium
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait



def shown(driver):
    return {
        "stats": driver.find_element(By.ID, "index-stats").text,
        "roots": [r.text for r in driver.find_elements(By.CSS_SELECTOR, "#index-roots tbody tr")],
    }


def main() -> None:
    base = sys.argv[1]
    with chromium(120) as driver:
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


if __name__ == "__main__":
    main()
