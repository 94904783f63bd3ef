-- A multi-hop ask's steps and the verification model's verdict, as
-- answer.v1 writes them (`hops`, `verification`); NULL for answers that
-- had none.
ALTER TABLE answers ADD COLUMN hops_json TEXT;
ALTER TABLE answers ADD COLUMN verification_json TEXT;
