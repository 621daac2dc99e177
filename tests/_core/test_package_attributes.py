"""The bundled data are reachable as an attribute of the package (issue 52: a new user's
``es.datasets.load_nile()`` raised AttributeError)."""
import subprocess
import sys


def test_datasets_is_an_attribute_in_a_fresh_interpreter():
    code = ("import energystats as es; assert 'datasets' in dir(es); "
            "print(es.datasets.load_nile().shape[0])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "100"
