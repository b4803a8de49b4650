x	y
