;; The exact scan's inner loop (see simd-dots.ts): dot products of 16-bit codes, 16 at a time.
;;
;; dots(codes, rows, dims, query, out): for each of `rows` rows of `dims` i16 codes laid end to
;; end from byte `codes`, out[r] (f32, from byte `out`) = the sum over i of codes[r][i] * query[i]
;; (query: `dims` i16 from byte `query`). dims must be a multiple of 16.
;;
;; i32x4.dot_i16x8_s sums two products in i32, which cannot overflow while no code is -32768
;; (2 * 32767^2 < 2^31); the row's sum may, so the pairs are summed in f32 (two accumulators,
;; to keep two additions in flight).
(module
  (memory (export "memory") 1)
  (func (export "dots")
    (param $codes i32) (param $rows i32) (param $dims i32) (param $query i32) (param $out i32)
    (local $p i32) (local $q i32) (local $rowEnd i32) (local $end i32) (local $a v128) (local $b v128)
    (local.set $p (local.get $codes))
    (local.set $end
      (i32.add (local.get $codes) (i32.shl (i32.mul (local.get $rows) (local.get $dims)) (i32.const 1))))
    (block $done
      (loop $row
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $rowEnd (i32.add (local.get $p) (i32.shl (local.get $dims) (i32.const 1))))
        (local.set $q (local.get $query))
        (local.set $a (v128.const i32x4 0 0 0 0))
        (local.set $b (v128.const i32x4 0 0 0 0))
        (loop $step
          (local.set $a
            (f32x4.add (local.get $a)
              (f32x4.convert_i32x4_s
                (i32x4.dot_i16x8_s (v128.load (local.get $p)) (v128.load (local.get $q))))))
          (local.set $b
            (f32x4.add (local.get $b)
              (f32x4.convert_i32x4_s
                (i32x4.dot_i16x8_s
                  (v128.load offset=16 (local.get $p)) (v128.load offset=16 (local.get $q))))))
          (local.set $p (i32.add (local.get $p) (i32.const 32)))
          (local.set $q (i32.add (local.get $q) (i32.const 32)))
          (br_if $step (i32.lt_u (local.get $p) (local.get $rowEnd))))
        (local.set $a (f32x4.add (local.get $a) (local.get $b)))
        (f32.store (local.get $out)
          (f32.add
            (f32.add (f32x4.extract_lane 0 (local.get $a)) (f32x4.extract_lane 1 (local.get $a)))
            (f32.add (f32x4.extract_lane 2 (local.get $a)) (f32x4.extract_lane 3 (local.get $a)))))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (br $row)))))
