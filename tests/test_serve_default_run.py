"""`polyvse serve` on the default run's English EmbN in a real browser, after `snakemake --cores all` here: the
page answers "a red circle" with test images, and (the target, not met yet) with red circles."""

from pathlib import Path

import pandas as pd
import pytest
from conftest import default_run_test_scenes
from polyvse.evaluate.described import Description, precision_at_k, relevant_images

REPO = Path(__file__).resolve().parents[1]
MODEL = REPO / "results" / "m30k" / "models" / "embn_en"
QUERY = Description("red", "circle")


def top_five(served, chromium) -> tuple[list[str], set[str]]:
    """The ids of the page's five results for QUERY, and the test images whose scene plans show it."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    scenes = default_run_test_scenes(MODEL)
    with served(MODEL) as url:
        chromium.get(url)
        wait = WebDriverWait(chromium, 60)
        wait.until(lambda b: b.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")
        Select(chromium.find_element(By.ID, "lang")).select_by_value("en")
        wanted = chromium.find_element(By.ID, "k")
        wanted.clear()
        wanted.send_keys("5")
        chromium.find_element(By.ID, "text").send_keys(QUERY.text)
        chromium.find_element(By.ID, "search-text").click()
        wait.until(lambda b: b.find_element(By.ID, "status").text == f"“{QUERY.text}” (en): 5 results")
        shown = chromium.find_elements(By.CSS_SELECTOR, "#results .result")
        assert all(r.find_element(By.TAG_NAME, "img").get_property("naturalWidth") > 0 for r in shown)
        return [r.get_attribute("data-id") for r in shown], relevant_images(QUERY, scenes)


def test_the_page_answers_a_short_query_with_test_images(served, chromium):
    found, relevant = top_five(served, chromium)
    images = pd.read_parquet(REPO / "results" / "m30k" / "images.parquet")
    assert len(found) == 5 and set(found) <= set(images.loc[images["split"] == "test", "image_id"])
    assert len(relevant) >= 5  # the test split shows the query often enough to fill a top 5


@pytest.mark.xfail(
    strict=True,
    reason="an open defect (docs/learning.md, 'Short queries'): the default models find the shape a query names, "
    "not yet its colour",
)
def test_the_page_shows_red_circles_for_a_red_circle(served, chromium):
    found, relevant = top_five(served, chromium)
    assert precision_at_k(found, relevant) >= 0.6, (found, sorted(relevant)[:10])
