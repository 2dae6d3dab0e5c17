'use strict';

const { median, mean } = require('../src/stats');

describe('median', () => {
  test('odd length', () => {
    expect(median([3, 1, 2])).toBe(2);
  });

  test('even length averages the middle pair', () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  test('empty throws', () => {
    expect(() => median([])).toThrow(RangeError);
  });
});

test('mean of three', () => {
  expect(mean([1, 2, 6])).toBe(3);
});
