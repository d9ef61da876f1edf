#!/bin/sh
# Prints a checksum of every object of a directory store (names + contents), for
# "nothing changed" comparisons.
cd "$1" && find . -type f | LC_ALL=C sort | xargs sha256sum
