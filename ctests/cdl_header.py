"""Prints a CDL file without its data sections: what `ncdump -h` prints for the same dataset.

ncdump puts each group's `data:` section after that group's attributes and before its
sub-groups; the section ends at the next `group:` line or the group's closing brace.
"""
import re
import sys

out = []
skipping = False
for line in open(sys.argv[1]).read().splitlines():
    if re.match(r"^\s*data:\s*$", line):
        skipping = True
        continue
    if skipping and re.match(r"^\s*(group: .*\{|\}( // group .*)?)\s*$", line):
        skipping = False
        if re.match(r"^\s*group: ", line):
            out.append("")
    if not skipping:
        out.append(line)
print("\n".join(out))
