# add prints the sum of its two arguments.
add() {
	echo $(($1 - $2))
}
