"""Type a Korean (or Japanese, Chinese) query into kebab's page through an
input method, in a real browser: Chromium's own IME composition events
(DevTools `Input.imeSetComposition`, one syllable block after another, as
a Korean keyboard composes them), then the committed text
(`Input.insertText`). Prints one JSON object: the searches the page sent
while the word was being composed, the searches in all, the hits'
citations, and every request that left for another origin.

usage: ime.py BASE_URL STEP [STEP…]
The last STEP is the committed word; the ones before it the composition
as it grows (e.g. ㅈ 조 좃 조서 조선).
"""

import json
import sys
import time

from browser import chromium
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

SEARCHES = """return performance.getEntriesByType("resource")
  .filter((e) => e.name.includes("/v1/search")).length"""



def main() -> None:
    base, steps = sys.argv[1], sys.argv[2:]
    with chromium(90) as driver:
        driver.get(base + "/")
        box = WebDriverWait(driver, 20).until(ec.element_to_be_clickable((By.ID, "q")))
        box.click()
        for step in steps[:-1]:
            driver.execute_cdp_cmd("Input.imeSetComposition", {
                "text": step, "selectionStart": len(step), "selectionEnd": len(step),
            })
            time.sleep(0.3)  # longer than the page's 200 ms debounce
        during = driver.execute_script(SEARCHES)
        composing = box.get_attribute("value")
        driver.execute_cdp_cmd("Input.insertText", {"text": steps[-1]})
        WebDriverWait(driver, 20).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, "#results li.hit")
            or "No hits" in d.find_element(By.ID, "status").text
        )
        time.sleep(0.5)
        elsewhere = driver.execute_script(
            "return performance.getEntriesByType('resource').map((e) => e.name)"
            ".filter((n) => !n.startsWith(location.origin))")
        print(json.dumps({
            "composing": composing,
            "searches_while_composing": during,
            "searches": driver.execute_script(SEARCHES),
            "box": box.get_attribute("value"),
            "hits": [h.text for h in driver.find_elements(By.CSS_SELECTOR, "#results li.hit .citation")],
            "elsewhere": elsewhere,
        }, ensure_ascii=False))


if __name__ == "__main__":
    main()
