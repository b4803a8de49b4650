abcdefgh
xy
