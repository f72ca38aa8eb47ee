/** Opcode bytes of the pickle protocols 2-5 that the writer emits (names as in CPython's pickle.py). */
export const Op = {
  PROTO: 0x80,
  FRAME: 0x95,
  STOP: 0x2e, // '.'
  MARK: 0x28, // '('
  NONE: 0x4e, // 'N'
  NEWTRUE: 0x88,
  NEWFALSE: 0x89,
  BININT: 0x4a, // 'J'
  BININT1: 0x4b, // 'K'
  BININT2: 0x4d, // 'M'
  LONG1: 0x8a,
  LONG4: 0x8b,
  BINFLOAT: 0x47, // 'G'
  SHORT_BINUNICODE: 0x8c,
  BINUNICODE: 0x58, // 'X'
  BINUNICODE8: 0x8d,
  SHORT_BINBYTES: 0x43, // 'C'
  BINBYTES: 0x42, // 'B'
  BINBYTES8: 0x8e,
  EMPTY_DICT: 0x7d, // '}'
  EMPTY_LIST: 0x5d, // ']'
  EMPTY_TUPLE: 0x29, // ')'
  TUPLE: 0x74, // 't'
  TUPLE1: 0x85,
  TUPLE2: 0x86,
  TUPLE3: 0x87,
  APPEND: 0x61, // 'a'
  APPENDS: 0x65, // 'e'
  SETITEM: 0x73, // 's'
  SETITEMS: 0x75, // 'u'
  BINGET: 0x68, // 'h'
  LONG_BINGET: 0x6a, // 'j'
  BINPUT: 0x71, // 'q'
  LONG_BINPUT: 0x72, // 'r'
  MEMOIZE: 0x94,
} as const;

/** CPython's `_BATCHSIZE`: items per MARK ... APPENDS / SETITEMS group. */
export const BATCH_SIZE = 1000;
/** CPython's framer: a frame is closed at the first opcode boundary at or past this size. */
export const FRAME_SIZE_TARGET = 64 * 1024;
/** Frames smaller than this get no FRAME header. */
export const FRAME_SIZE_MIN = 4;
/** FRAME opcode + 8-byte length. */
export const FRAME_HEADER_SIZE = 9;
