// A line diff for the console's history view: Myers' shortest edit script, which is
// also what diff(1) and git compute, on what is left after the common start and end.

const MAX_DIFF_LINES = 50000;
const MAX_DIFF_EDITS = 2000;

/**
 * The lines of `before` and `after` as a list of { type: 'same' | 'del' | 'add', text },
 * shortest edit first (Myers' algorithm on what is left after the common start and end),
 * or null when the values are too long or too different to compare here.
 */
export function diffLines(before, after) {
  const x = before.split('\n');
  const y = after.split('\n');
  let start = 0;
  while (start < x.length && start < y.length && x[start] === y[start]) start += 1;
  let endX = x.length;
  let endY = y.length;
  while (endX > start && endY > start && x[endX - 1] === y[endY - 1]) {
    endX -= 1;
    endY -= 1;
  }
  if (endX - start + (endY - start) > MAX_DIFF_LINES) return null;
  const middle = shortestEdit(x.slice(start, endX), y.slice(start, endY));
  if (!middle) return null;
  const same = (text) => ({ type: 'same', text });
  return [...x.slice(0, start).map(same), ...middle, ...x.slice(endX).map(same)];
}

function shortestEdit(a, b) {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace = [];
  let found = -1;
  for (let d = 0; d <= max && found < 0; d += 1) {
    if (d > MAX_DIFF_EDITS) return null;
    // V as it was before this round, for k in [-d - 1, d + 1]: enough to walk back.
    trace.push(v.slice(offset - d - 1, offset + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x += 1;
        y += 1;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
  }
  const ops = [];
  let x = n;
  let y = m;
  for (let d = found; d >= 0; d -= 1) {
    const before = trace[d];
    const at = (k) => before[k + d + 1];
    const k = x - y;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const previousK = down ? k + 1 : k - 1;
    const previousX = d === 0 ? 0 : at(previousK);
    const previousY = d === 0 ? 0 : previousX - previousK;
    while (x > previousX && y > previousY) {
      ops.push({ type: 'same', text: a[x - 1] });
      x -= 1;
      y -= 1;
    }
    if (d > 0) {
      if (down) ops.push({ type: 'add', text: b[previousY] });
      else ops.push({ type: 'del', text: a[previousX] });
    }
    x = previousX;
    y = previousY;
  }
  return ops.reverse();
}
