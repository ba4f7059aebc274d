CREATE OR REPLACE FUNCTION public.order_search_keys(workspace_id uuid, search_text text)
 RETURNS integer[]
 LANGUAGE plpgsql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$
      DECLARE
        ws text := workspace_id::text;
        keys int[] := '{}';
        word text;
        previous text;
        n int;
      BEGIN
        FOREACH word IN ARRAY regexp_split_to_array(search_text, '[\x01-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]+') LOOP
          n := length(word);
          CONTINUE WHEN n = 0;
          FOR i IN 1 .. n - 2 LOOP
            keys := keys || hashtext(ws || substr(word, i, 3));
          END LOOP;
          IF previous IS NOT NULL THEN
            keys := keys || hashtext(ws || right(previous, 4) || ' ' || left(word, 4));
            keys := keys || hashtext(ws || '~' || right(previous, 2) || ' ' || left(word, 2));
          END IF;
          previous := word;
        END LOOP;
        RETURN keys;
      END $function$
