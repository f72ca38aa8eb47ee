/**
 * The rows of the trace columns that one trace list received, in list order. Python appends a
 * device's entries in the order it created them, so this is almost always one run of consecutive
 * rows and costs nothing; an explicit row array appears only if a file interleaves lists.
 */
export class RowList {
  first = 0;
  count = 0;
  rows: Int32Array | null = null;

  add(row: number): void {
    if (this.rows === null) {
      if (this.count === 0) this.first = row;
      if (row === this.first + this.count) {
        this.count++;
        return;
      }
      this.rows = new Int32Array(Math.max(16, this.count * 2));
      for (let i = 0; i < this.count; i++) this.rows[i] = this.first + i;
    }
    if (this.count === this.rows.length) {
      const grown = new Int32Array(this.rows.length * 2);
      grown.set(this.rows);
      this.rows = grown;
    }
    this.rows[this.count++] = row;
  }

  /** Rows first..first+count-1, in order. */
  addRun(first: number, count: number): void {
    if (this.rows === null && (this.count === 0 || first === this.first + this.count)) {
      if (this.count === 0) this.first = first;
      this.count += count;
      return;
    }
    for (let i = 0; i < count; i++) this.add(first + i);
  }

  /** Row index of the i-th entry of the list. */
  at(i: number): number {
    return this.rows === null ? this.first + i : this.rows[i]!;
  }
}
