"""A screenshot of `polyvse serve`'s page with the results of one query (docs/serve.png), taken by the same
headless Chromium the browser tests drive (Debian's chromium and chromium-driver, Selenium).

Run: .venv/bin/python bench/serve_screenshot.py results/m30k/models/mule_10 --text "a red circle" --lang en
[--out docs/serve.png] [--k 12]
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model", type=Path)
    p.add_argument("--text", required=True)
    p.add_argument("--lang", required=True)
    p.add_argument("--k", type=int, default=12)
    p.add_argument("--out", type=Path, default=Path("docs/serve.png"))
    args = p.parse_args()

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    from polyvse.serve import SearchService, running

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or shutil.which("chromium-browser") or ""
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1200,900"):
        options.add_argument(flag)
    with running(SearchService(args.model)) as url:
        browser = webdriver.Chrome(service=Service(shutil.which("chromedriver") or ""), options=options)
        try:
            browser.get(url)
            wait = WebDriverWait(browser, 60)
            wait.until(lambda b: b.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")
            Select(browser.find_element(By.ID, "lang")).select_by_value(args.lang)
            k = browser.find_element(By.ID, "k")
            k.clear()
            k.send_keys(str(args.k))
            browser.find_element(By.ID, "text").send_keys(args.text)
            browser.find_element(By.ID, "search-text").click()
            wait.until(lambda b: b.find_element(By.ID, "status").text.endswith(f"{args.k} results"))
            wait.until(
                lambda b: all(i.get_property("complete") for i in b.find_elements(By.CSS_SELECTOR, "#results img"))
            )
            args.out.parent.mkdir(parents=True, exist_ok=True)
            browser.save_screenshot(str(args.out))
            print(f"{args.out}: {browser.find_element(By.ID, 'status').text}")
        finally:
            browser.quit()


if __name__ == "__main__":
    main()
