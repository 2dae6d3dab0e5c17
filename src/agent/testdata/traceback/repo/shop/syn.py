def broken(x):
    if x
        return 1
