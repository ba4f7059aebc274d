CREATE OR REPLACE FUNCTION public.search_pattern_keys(workspace_id uuid, pattern text)
 RETURNS integer[]
 LANGUAGE plpgsql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$
      DECLARE
        ws text := workspace_id::text;
        words text[] := array_remove(regexp_split_to_array(pattern, '[\x01-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]+'), '');
        last int := coalesce(array_length(words, 1), 0);
        meetings int[] := '{}';
        trigrams int[] := '{}';
        n int;
      BEGIN
        FOR w IN 1 .. last LOOP
          n := length(words[w]);
          IF w > 1 AND (w > 2 OR length(words[1]) >= 4) AND (w < last OR n >= 4) THEN
            meetings := meetings || hashtext(ws || right(words[w - 1], 4) || ' ' || left(words[w], 4));
          ELSIF w > 1 AND (w > 2 OR length(words[1]) >= 2) AND (w < last OR n >= 2) THEN
            meetings := meetings || hashtext(ws || '~' || right(words[w - 1], 2) || ' ' || left(words[w], 2));
          END IF;
          CONTINUE WHEN n < 3;
          FOR i IN 1 .. n BY 3 LOOP
            trigrams := trigrams || hashtext(ws || substr(words[w], least(i, n - 2), 3));
          END LOOP;
        END LOOP;
        RETURN CASE WHEN meetings <> '{}' THEN meetings ELSE trigrams END;
      END $function$
