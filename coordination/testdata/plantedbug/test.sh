#!/bin/sh
# The project's tests: sh test.sh
. ./add.sh
got=$(add 2 3)
if [ "$got" != 5 ]; then
	echo "FAIL: add 2 3 = $got, want 5"
	exit 1
fi
echo "PASS"
