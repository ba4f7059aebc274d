CREATE OR REPLACE FUNCTION public.order_products_key(products_name text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$ SELECT regexp_replace(lower(public.unaccent('public.unaccent'::regdictionary, products_name)), '\s+', '', 'g') $function$
