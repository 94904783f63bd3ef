"""Ask through kebab's web page in a real browser (headless Chromium through
Selenium), as a person would: open the Ask view, type QUESTION and press
Enter, watch the answer stream in, open what its first [#n] cites, then ask
REFUSED (a question the notes cannot answer), then list, reopen and delete
the conversation. Screenshots at phone and desktop widths go to SHOTS.

Prints JSON lines: {"streamed"}, {"answer"}, {"reader"}, {"refusal"},
{"sessions"}, {"console_errors"}.

usage: ask.py BASE_URL QUESTION REFUSED SHOTS
(REFUSED `-`: the first question only, then the console errors.)
"""

import json
import os
import sys
import time

from browser import chromium
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait



def emit(**fields):
    print(json.dumps(fields, ensure_ascii=False), flush=True)


def turns(driver):
    return driver.find_elements(By.CSS_SELECTOR, "#conversation .turn")


def ask(driver, question):
    """Type the question, press Enter; return (texts seen while it
    streamed, the finished turn element)."""
    before = len(turns(driver))
    box = driver.find_element(By.ID, "question")
    box.send_keys(question)
    box.send_keys(Keys.ENTER)
    WebDriverWait(driver, 20).until(lambda d: len(turns(d)) > before)
    turn = turns(driver)[-1]
    seen = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        text = turn.find_element(By.CLASS_NAME, "answer").text
        finished = turn.find_element(By.CLASS_NAME, "answer-meta").text
        status = driver.find_element(By.ID, "ask-status")
        if finished or "error" in (status.get_attribute("class") or ""):
            break
        if text and (not seen or seen[-1] != text):
            seen.append(text)
        time.sleep(0.05)
    return seen, turn


def console_errors(driver):
    return [e.get("message") for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def main() -> None:
    base, question, refused, shots = sys.argv[1:5]
    os.makedirs(shots, exist_ok=True)
    with chromium(150) as driver:
        driver.set_window_size(1280, 900)
        driver.get(base + "/")
        WebDriverWait(driver, 20).until(ec.element_to_be_clickable((By.ID, "q")))
        driver.find_element(By.CSS_SELECTOR, '.view-tab[data-view="ask-view"]').click()
        WebDriverWait(driver, 20).until(ec.element_to_be_clickable((By.ID, "question")))

        seen, turn = ask(driver, question)
        emit(streamed=seen)
        markers = [m.text for m in turn.find_elements(By.CSS_SELECTOR, ".answer .marker")]
        emit(answer={
            "text": turn.find_element(By.CLASS_NAME, "answer").text,
            "meta": turn.find_element(By.CLASS_NAME, "answer-meta").text,
            "markers": markers,
            "sources": [s.text for s in turn.find_elements(By.CSS_SELECTOR, ".sources li")],
            "hops": [h.text for h in turn.find_elements(By.CSS_SELECTOR, ".hops li")],
            "status": driver.find_element(By.ID, "ask-status").text,
        })
        reader = {}
        if markers:
            turn.find_element(By.CSS_SELECTOR, ".answer .marker").click()
            WebDriverWait(driver, 20).until(
                lambda d: d.find_element(By.ID, "reader-text").text
                or "Loading" not in d.find_element(By.ID, "reader-meta").text
            )
            reader = {
                "title": driver.find_element(By.ID, "reader-title").text,
                "file": driver.find_element(By.ID, "reader-file").text,
                "text": driver.find_element(By.ID, "reader-text").text,
                "after": driver.find_element(By.ID, "reader-after").text,
            }
        emit(reader=reader)
        driver.save_screenshot(os.path.join(shots, "page-ask-desktop.png"))
        driver.set_window_size(390, 844)
        driver.save_screenshot(os.path.join(shots, "page-ask-phone.png"))
        driver.set_window_size(1280, 900)
        if refused == "-":
            emit(console_errors=console_errors(driver))
            return

        # A question of its own (a follow-up would be searched with the
        # answer before it).
        driver.find_element(By.ID, "ask-new").click()
        _, turn = ask(driver, refused)
        emit(refusal={
            "text": turn.find_element(By.CLASS_NAME, "answer").text,
            "meta": turn.find_element(By.CLASS_NAME, "answer-meta").text,
            "searched": [s.text for s in turn.find_elements(By.CSS_SELECTOR, ".sources li")],
            "class": turn.get_attribute("class"),
            "status": driver.find_element(By.ID, "ask-status").text,
        })

        # The conversation is kept: list it, reopen it, delete it.
        driver.find_element(By.CSS_SELECTOR, "#sessions-view summary").click()
        WebDriverWait(driver, 20).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, "#sessions li.session"))
        WebDriverWait(driver, 20).until(
            lambda d: len(d.find_elements(By.CSS_SELECTOR, "#sessions li.session")) >= 2)
        listed = [s.text for s in driver.find_elements(By.CSS_SELECTOR, "#sessions li.session")]
        driver.find_element(By.ID, "ask-new").click()
        emptied = len(turns(driver))
        first = [s for s in driver.find_elements(By.CSS_SELECTOR, "#sessions li.session")
                 if question[:20] in s.text][0]
        first.find_element(By.TAG_NAME, "button").click()
        WebDriverWait(driver, 20).until(lambda d: len(turns(d)) > 0)
        reopened = [t.find_element(By.CLASS_NAME, "question").text for t in turns(driver)]
        first.find_element(By.CLASS_NAME, "delete").click()
        WebDriverWait(driver, 10).until(ec.alert_is_present())
        driver.switch_to.alert.accept()
        WebDriverWait(driver, 20).until(
            lambda d: len(d.find_elements(By.CSS_SELECTOR, "#sessions li.session")) < len(listed))
        emit(sessions={
            "listed": listed,
            "emptied": emptied,
            "reopened": reopened,
            "after_delete": [s.text for s in driver.find_elements(By.CSS_SELECTOR, "#sessions li.session")],
        })
        emit(console_errors=console_errors(driver))


if __name__ == "__main__":
    main()
