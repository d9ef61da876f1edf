"""The Python tests' shared counter: check(cond, what) counts, finish(label) prints the
closing "N passed, M failed" line and returns the exit status."""
passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAILED:", what)


def finish(label):
    print(f"{label}: {passed} passed, {failed} failed")
    return 1 if failed else 0
