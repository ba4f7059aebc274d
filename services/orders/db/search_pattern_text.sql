CREATE OR REPLACE FUNCTION public.search_pattern_text(pattern text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$ SELECT lower(public.unaccent('public.unaccent'::regdictionary, translate(regexp_replace(pattern, '[\u064B-\u065F\u0670\u0640]', '', 'g'), 'أإآٱ', 'اااا'))) $function$
