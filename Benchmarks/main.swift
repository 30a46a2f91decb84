print("benchmarks: see issue 3")
