"""Drive kebab's web page in a real browser (headless Chromium through
Selenium): open BASE_URL, type QUERY into the search box as a person would,
wait for the hits, and print them as JSON lines ({"citation", "meta",
"snippet", "marked"}), then the page's status line, then what the reader
shows after opening the first hit from the keyboard (down arrow, Enter), then the index view,
then console errors (and whether any document text ran as script).

usage: search.py BASE_URL QUERY [TOKEN]
With TOKEN, the page's prompt for the server's token is answered with it.
"""

import json
import sys

from browser import chromium
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait



def main() -> None:
    base, query = sys.argv[1], sys.argv[2]
    token = sys.argv[3] if len(sys.argv) > 3 else None
    with chromium(120) as driver:
        driver.get(base + "/")
        box = WebDriverWait(driver, 20).until(ec.element_to_be_clickable((By.ID, "q")))
        box.send_keys(query)
        if token:
            WebDriverWait(driver, 20).until(ec.alert_is_present())
            alert = driver.switch_to.alert
            alert.send_keys(token)
            alert.accept()
        WebDriverWait(driver, 20).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, "#results li.hit")
            or "No hits" in d.find_element(By.ID, "status").text
            or "error" in (d.find_element(By.ID, "status").get_attribute("class") or "")
        )
        for hit in driver.find_elements(By.CSS_SELECTOR, "#results li.hit"):
            print(json.dumps({
                "citation": hit.find_element(By.CLASS_NAME, "citation").text,
                "meta": hit.find_element(By.CLASS_NAME, "meta").text,
                "snippet": hit.find_element(By.CLASS_NAME, "snippet").text,
                "marked": [m.text for m in hit.find_elements(By.TAG_NAME, "mark")],
            }, ensure_ascii=False))
        print(json.dumps({"status": driver.find_element(By.ID, "status").text}, ensure_ascii=False))
        # Open the first hit from the keyboard: the down arrow moves from
        # the box to the first hit's citation, Enter opens it.
        first = driver.find_elements(By.CSS_SELECTOR, "#results li.hit .citation button")
        reader = {}
        if first:
            box.send_keys(Keys.ARROW_DOWN)
            focused = driver.switch_to.active_element
            reader["focused"] = focused.text
            focused.send_keys(Keys.ENTER)
            WebDriverWait(driver, 20).until(
                lambda d: d.find_element(By.ID, "reader-text").text
                or "Loading" not in d.find_element(By.ID, "reader-meta").text
            )
            reader.update({
                "title": driver.find_element(By.ID, "reader-title").text,
                "meta": driver.find_element(By.ID, "reader-meta").text,
                "text": driver.find_element(By.ID, "reader-text").text,
            })
        print(json.dumps({"reader": reader}, ensure_ascii=False))
        # The index at a glance: open it and read its roots and plugins.
        driver.find_element(By.CSS_SELECTOR, '.view-tab[data-view="index-view"]').click()
        WebDriverWait(driver, 20).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, "#index-roots tbody tr")
            or d.find_element(By.ID, "index-stats").text
        )
        driver.find_element(By.ID, "doctor-run").click()
        WebDriverWait(driver, 60).until(
            lambda d: "Checking" not in d.find_element(By.ID, "doctor-checks").text
        )
        print(json.dumps({"index": {
            "stats": driver.find_element(By.ID, "index-stats").text,
            "roots": [r.text for r in driver.find_elements(By.CSS_SELECTOR, "#index-roots tbody tr")],
            "plugins": driver.find_element(By.ID, "index-plugins").text,
            "doctor": [c.text for c in driver.find_elements(By.CSS_SELECTOR, "#doctor-checks li")],
        }}, ensure_ascii=False))
        errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        # A document's text that is markup must never have run.
        pwned = driver.execute_script("return window.__kebab_pwned || null")
        print(json.dumps({"console_errors": [e.get("message") for e in errors], "pwned": pwned}))


if __name__ == "__main__":
    main()
