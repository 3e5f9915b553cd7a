#!/usr/bin/python3
"""Opens a shiftcast-sim report page (--html) in headless Chromium, as a person would, and prints what the
browser rendered as one JSON object: the verdict's text and data-met, the budgets listed as missed, and
for every chart (svg[data-chart]) its rendered width and height in CSS pixels, its polylines (series name
and number of points), its bars (count and the sum of their data-count) and its axis titles; plus the
browser's console errors and whether the page asked for anything over the network (it must not: the page
is self-contained). Usage:

    read_report_page.py PAGE.html [--screenshot FILE.png]

Needs Debian's chromium, chromium-driver and python3-selenium (scripts/install-deps.sh installs them);
run with Debian's /usr/bin/python3, which is the interpreter that has selenium.
"""
import json
import pathlib
import sys

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By


def main():
    page = pathlib.Path(sys.argv[1]).resolve()
    screenshot = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--screenshot" else None
    options = Options()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=900,1200"):
        options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.get(page.as_uri())
        if screenshot:
            # The whole page: the window grows to the document's height first.
            height = driver.execute_script("return document.documentElement.scrollHeight")
            driver.set_window_size(900, min(int(height) + 40, 4000))
            pathlib.Path(screenshot).write_bytes(driver.get_screenshot_as_png())
        verdict = driver.find_element(By.ID, "verdict")
        missed = [li.text for li in driver.find_elements(By.CSS_SELECTOR, "#missed li")]
        charts = {}
        for svg in driver.find_elements(By.CSS_SELECTOR, "svg[data-chart]"):
            size = svg.size
            lines = [{"series": p.get_attribute("data-series"),
                      "points": len((p.get_attribute("points") or "").split())}
                     for p in svg.find_elements(By.CSS_SELECTOR, "polyline.series")]
            bars = svg.find_elements(By.CSS_SELECTOR, "rect.bar")
            charts[svg.get_attribute("data-chart")] = {
                "width": size["width"], "height": size["height"], "lines": lines, "bars": len(bars),
                "bar_total": sum(int(b.get_attribute("data-count")) for b in bars),
                "axis_titles": [t.text for t in svg.find_elements(By.CSS_SELECTOR, "text.axis-title")],
            }
        console = [e["message"] for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        # Every request the page made, from the performance log: only the page itself may appear.
        requests = []
        for entry in driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message.get("method") == "Network.requestWillBeSent":
                requests.append(message["params"]["request"]["url"])
        print(json.dumps({"verdict": verdict.text, "met": verdict.get_attribute("data-met"),
                          "missed": missed, "charts": charts, "console_errors": console,
                          "requests": [u for u in requests if u != page.as_uri()], "title": driver.title}))
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
