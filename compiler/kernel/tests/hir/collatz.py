import wave


@wave.kernel(workgroup=64)
def collatz(start: u32[:], steps: u32[:], odd_steps: u32[:]):
    """Collatz steps, capped at 60: two exits in a row merge into one test, and the if/else
    is if-converted with x and odd updated in place."""
    i = wave.global_id()
    x = start[i]
    count: u32 = 0
    odd: u32 = 0
    while x != 1:
        count += 1
        if count > 60:
            break
        if x % 2 == 0:
            x = x >> 1
        else:
            odd += 1
            x = 3 * x + 1
    steps[i] = count
    odd_steps[i] = odd
