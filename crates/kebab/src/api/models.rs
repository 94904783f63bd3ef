//! Model use cases — the embedding catalog, model downloads, the Korean
//! and Japanese dictionary imports — each returning its typed `*.v1`
//! result.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use super::{ApiError, Session};
use kebab_search::cjk::CjkAnalyzer;
use kebab_search::embed::pull::{self, PulledFile};
use kebab_search::embed::{EmbeddingConfig, ModelSpec, catalog};
use kebab_search::korean::KoreanAnalyzer;

/// One catalog model in `models.v1`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ModelRow {
    pub name: String,
    pub dimensions: usize,
    /// Which languages it serves.
    pub languages: String,
    /// Hugging Face repository it downloads from.
    pub hub_repo: String,
    /// It is `[models.embedding] model`.
    pub configured: bool,
    /// Where it is installed, if it is.
    pub installed: Option<PathBuf>,
}

/// `models.v1`: the embedding catalog (`kebab models list`).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ModelsReport {
    pub schema_version: &'static str,
    pub models: Vec<ModelRow>,
}

/// `model_pull.v1`: a downloaded model (`kebab models pull`).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ModelPullReport {
    pub schema_version: &'static str,
    pub name: String,
    pub dir: PathBuf,
    pub files: Vec<PulledFile>,
    /// The config does not select this model yet.
    pub needs_config: bool,
}

/// `ko_dic_import.v1` / `ja_dic_import.v1`: a morphological dictionary
/// built from a compiled MeCab dictionary (`kebab models import-ko-dic`,
/// `import-ja-dic`).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct DicImportReport {
    pub schema_version: &'static str,
    pub dir: PathBuf,
    /// Dictionary entries written.
    pub entries: usize,
    pub seconds: f64,
    /// Words of a fixed sample sentence ([`DicLanguage::sample`]),
    /// analysed with the new dictionary.
    pub sample: String,
}

/// A language whose dictionary `kebab models import-*-dic` builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DicLanguage {
    /// From mecab-ko-dic (PyPI `python-mecab-ko-dic`).
    Korean,
    /// From IPADIC (PyPI `ipadic`).
    Japanese,
}

impl DicLanguage {
    /// The sentence the import analyses to show the dictionary works.
    pub fn sample(self) -> &'static str {
        match self {
            DicLanguage::Korean => "서울특별시에서 개발되었다",
            DicLanguage::Japanese => "東京都に住んでいます",
        }
    }

    /// Directory name under `models/`.
    fn dir_name(self) -> &'static str {
        match self {
            DicLanguage::Korean => crate::app::KO_DIC,
            DicLanguage::Japanese => crate::app::JA_DIC,
        }
    }
}

impl Session {
    /// `kebab models list`: catalog models and whether each is installed.
    pub fn models_list(&self) -> ModelsReport {
        let embedding = &self.config().models.embedding;
        let paths = self.paths();
        let models = catalog::CATALOG
            .iter()
            .map(|card| {
                let config = EmbeddingConfig {
                    provider: kebab_search::embed::Provider::Onnx,
                    model: card.name.into(),
                    path: None,
                    // Installed means model.onnx is there, int8 copy or not.
                    compute: kebab_search::embed::Compute::Float,
                    ..embedding.clone()
                };
                ModelRow {
                    name: card.name.into(),
                    dimensions: card.dimensions,
                    languages: card.languages.into(),
                    hub_repo: card.hub_repo.into(),
                    configured: card.name == embedding.model,
                    installed: ModelSpec::resolve(&config, &paths.data_dir, &paths.cache_dir)
                        .ok()
                        .flatten()
                        .and_then(|s| s.local_dir().map(Path::to_path_buf)),
                }
            })
            .collect();
        ModelsReport {
            schema_version: "models.v1",
            models,
        }
    }

    /// `kebab models pull NAME`: download a catalog model into the user
    /// cache's `models/`; `progress(file, done, total)` as bytes arrive.
    pub fn model_pull(
        &self,
        name: &str,
        endpoint: Option<&str>,
        progress: impl FnMut(&str, u64, Option<u64>),
    ) -> Result<ModelPullReport, ApiError> {
        let card = catalog::card(name).ok_or_else(|| {
            let known: Vec<&str> = catalog::CATALOG.iter().map(|c| c.name).collect();
            ApiError::invalid(
                "name",
                format!(
                    "no model named {name} in the catalog (known: {})",
                    known.join(", ")
                ),
            )
        })?;
        let endpoint = endpoint.unwrap_or(pull::DEFAULT_ENDPOINT);
        let dir = self.paths().cache_dir.join("models").join(card.name);
        let cap = self.config().models.download_cap();
        let files = pull::pull(card, endpoint, &dir, cap, progress)?;
        Ok(ModelPullReport {
            schema_version: "model_pull.v1",
            name: card.name.into(),
            dir,
            files,
            needs_config: self.config().models.embedding.model != card.name,
        })
    }

    /// `kebab models import-ko-dic DIR` / `import-ja-dic DIR`: build the
    /// `language`'s dictionary from a compiled MeCab dictionary into `out`
    /// (default: the user cache's `models/`), and check it on a sample
    /// sentence.
    pub fn import_dictionary(
        &self,
        language: DicLanguage,
        source: &Path,
        out: Option<PathBuf>,
    ) -> Result<DicImportReport, ApiError> {
        let dir = out.unwrap_or_else(|| {
            self.paths()
                .cache_dir
                .join("models")
                .join(language.dir_name())
        });
        let started = Instant::now();
        let (schema_version, entries, sample) = match language {
            DicLanguage::Korean => {
                let entries = kebab_search::korean::build_dictionary(source, &dir)?;
                let sample = KoreanAnalyzer::load(&dir)?.morphemes(language.sample())?;
                ("ko_dic_import.v1", entries, sample)
            }
            DicLanguage::Japanese => {
                let entries = kebab_search::cjk::build_japanese_dictionary(source, &dir)?;
                let sample = CjkAnalyzer::new(None, Some(dir.clone()))
                    .morphemes(language.sample(), Some("ja"))?;
                ("ja_dic_import.v1", entries, sample)
            }
        };
        Ok(DicImportReport {
            schema_version,
            dir,
            entries,
            seconds: started.elapsed().as_secs_f64(),
            sample: sample.unwrap_or_default(),
        })
    }
}
