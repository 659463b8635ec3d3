'use strict';
// TureenError and the status codes, both named by the library itself
// (tureen_status_name), so no number is copied here.
const native = require('./addon');

class TureenError extends Error {
  // code: the status name ("KEY", "NOT_FOUND", ...); status: its number.
  constructor(message, code, status) {
    super(message);
    this.name = 'TureenError';
    this.code = code;
    this.status = status;
  }
}
native.setErrorClass(TureenError);

// Every status name with its number: Status.NOT_FOUND === 3.
const Status = {};
for (let n = 0; n < 100; n++) {
  const name = native.statusName(n);
  if (name !== null) Status[name] = n;
}
Object.freeze(Status);

module.exports = { TureenError, Status };
