/**
 * Pickle opcodes (CPython Lib/pickle.py naming), protocols 0-5. A const enum: tsc writes each use
 * as its number, so the decoder's opcode switches compile to jump tables. With property reads
 * (`Op.BINGET`) as case labels, every label the interpreter had not yet compared against had no
 * type feedback, and reaching it threw the optimized decoder loop away (recompiled ~3 times per
 * process). Bundlers that compile file by file keep an Op object instead, which reads the same.
 */
// biome-ignore lint/suspicious/noConstEnum: inlined on purpose (see above); no code indexes Op.
export const enum Op {
  MARK = 0x28,
  STOP = 0x2e,
  POP = 0x30,
  POP_MARK = 0x31,
  DUP = 0x32,
  FLOAT = 0x46,
  INT = 0x49,
  BININT = 0x4a,
  BININT1 = 0x4b,
  LONG = 0x4c,
  BININT2 = 0x4d,
  NONE = 0x4e,
  PERSID = 0x50,
  BINPERSID = 0x51,
  REDUCE = 0x52,
  STRING = 0x53,
  BINSTRING = 0x54,
  SHORT_BINSTRING = 0x55,
  UNICODE = 0x56,
  BINUNICODE = 0x58,
  APPEND = 0x61,
  BUILD = 0x62,
  GLOBAL = 0x63,
  DICT = 0x64,
  EMPTY_DICT = 0x7d,
  APPENDS = 0x65,
  GET = 0x67,
  BINGET = 0x68,
  INST = 0x69,
  LONG_BINGET = 0x6a,
  LIST = 0x6c,
  EMPTY_LIST = 0x5d,
  OBJ = 0x6f,
  PUT = 0x70,
  BINPUT = 0x71,
  LONG_BINPUT = 0x72,
  SETITEM = 0x73,
  TUPLE = 0x74,
  EMPTY_TUPLE = 0x29,
  SETITEMS = 0x75,
  BINFLOAT = 0x47,
  PROTO = 0x80,
  NEWOBJ = 0x81,
  EXT1 = 0x82,
  EXT2 = 0x83,
  EXT4 = 0x84,
  TUPLE1 = 0x85,
  TUPLE2 = 0x86,
  TUPLE3 = 0x87,
  NEWTRUE = 0x88,
  NEWFALSE = 0x89,
  LONG1 = 0x8a,
  LONG4 = 0x8b,
  BINBYTES = 0x42,
  SHORT_BINBYTES = 0x43,
  SHORT_BINUNICODE = 0x8c,
  BINUNICODE8 = 0x8d,
  BINBYTES8 = 0x8e,
  EMPTY_SET = 0x8f,
  ADDITEMS = 0x90,
  FROZENSET = 0x91,
  NEWOBJ_EX = 0x92,
  STACK_GLOBAL = 0x93,
  MEMOIZE = 0x94,
  FRAME = 0x95,
  BYTEARRAY8 = 0x96,
  NEXT_BUFFER = 0x97,
  READONLY_BUFFER = 0x98,
}

/** Highest protocol memlens understands (Python 3.14's default is 5). */
export const MAX_PROTOCOL = 5;

export function opName(op: number): string {
  const hex = `0x${op.toString(16).padStart(2, '0')}`;
  const printable = op >= 0x20 && op < 0x7f ? ` '${String.fromCharCode(op)}'` : '';
  return `${hex}${printable}`;
}

/**
 * Bytes an opcode needs before any variable-length payload: the opcode itself plus its fixed
 * argument or length field. 0 = not an opcode.
 */
export const HEADER_BYTES: Uint8Array = (() => {
  const t = new Uint8Array(256);
  const ones = [
    Op.MARK,
    Op.STOP,
    Op.POP,
    Op.POP_MARK,
    Op.DUP,
    Op.NONE,
    Op.BINPERSID,
    Op.REDUCE,
    Op.APPEND,
    Op.BUILD,
    Op.DICT,
    Op.EMPTY_DICT,
    Op.APPENDS,
    Op.LIST,
    Op.EMPTY_LIST,
    Op.OBJ,
    Op.SETITEM,
    Op.TUPLE,
    Op.EMPTY_TUPLE,
    Op.SETITEMS,
    Op.NEWOBJ,
    Op.TUPLE1,
    Op.TUPLE2,
    Op.TUPLE3,
    Op.NEWTRUE,
    Op.NEWFALSE,
    Op.EMPTY_SET,
    Op.ADDITEMS,
    Op.FROZENSET,
    Op.NEWOBJ_EX,
    Op.STACK_GLOBAL,
    Op.MEMOIZE,
    Op.NEXT_BUFFER,
    Op.READONLY_BUFFER,
    Op.FLOAT,
    Op.INT,
    Op.LONG,
    Op.PERSID,
    Op.STRING,
    Op.UNICODE,
    Op.GLOBAL,
    Op.GET,
    Op.INST,
    Op.PUT,
  ];
  for (const op of ones) t[op] = 1;
  for (const op of [Op.BININT1, Op.BINGET, Op.BINPUT, Op.PROTO, Op.EXT1, Op.LONG1, Op.SHORT_BINBYTES])
    t[op] = 2;
  for (const op of [Op.SHORT_BINUNICODE, Op.SHORT_BINSTRING]) t[op] = 2;
  for (const op of [Op.BININT2, Op.EXT2]) t[op] = 3;
  for (const op of [Op.BININT, Op.LONG_BINGET, Op.LONG_BINPUT, Op.EXT4, Op.LONG4, Op.BINBYTES]) t[op] = 5;
  for (const op of [Op.BINUNICODE, Op.BINSTRING]) t[op] = 5;
  for (const op of [Op.BINFLOAT, Op.FRAME, Op.BINUNICODE8, Op.BINBYTES8, Op.BYTEARRAY8]) t[op] = 9;
  return t;
})();
